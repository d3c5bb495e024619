# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Cross build for 64-bit Arm Linux with Debian's cross toolchain
# (g++-aarch64-linux-gnu) and the arm64 development packages installed
# through multiarch (libssl-dev:arm64, liburing-dev:arm64,
# libgtest-dev:arm64), as scripts/test-arm64.sh sets them up:
#
#   cmake -S . -B build-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# Test programs run under qemu-aarch64 user emulation (qemu-user-static),
# which ctest and GoogleTest's test discovery call for every binary.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Multiarch: arm64 headers and libraries live beside the host's under /usr
# (include/aarch64-linux-gnu, lib/aarch64-linux-gnu), so the sysroot is /
# and only arm64 directories may satisfy a library search.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR}
    "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
