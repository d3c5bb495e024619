# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Installation and the Debian package.
#
# `cmake --install` puts aesmux.so in OpenSSL's module directory (an
# absolute path, from libcrypto's pkg-config; OpenSSL looks nowhere else),
# the aesmux command in <prefix>/bin, the man pages aesmux(1) and aesmux(7)
# and the documentation under <prefix>/share. Every other part that
# installs something (the ENGINE module, where built) does so with its own
# install() rule; the package is whatever `cmake --install` installs.
include(GNUInstallDirs)

# The man pages, made by docs/CMakeLists.txt.
install(FILES ${PROJECT_BINARY_DIR}/aesmux.1.gz
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/aesmux.7.gz
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
  ${PROJECT_SOURCE_DIR}/openssl.cnf.example
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The guides README.md links to, where its links find them.
install(FILES ${PROJECT_SOURCE_DIR}/docs/design.md
  ${PROJECT_SOURCE_DIR}/docs/afalg.md ${PROJECT_SOURCE_DIR}/docs/engine.md
  ${PROJECT_SOURCE_DIR}/docs/operating.md ${PROJECT_SOURCE_DIR}/docs/settings.md
  ${PROJECT_SOURCE_DIR}/docs/differences.md ${PROJECT_SOURCE_DIR}/docs/security.md
  ${PROJECT_SOURCE_DIR}/docs/calibration.svg ${PROJECT_SOURCE_DIR}/docs/calibration.conf
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# Debian policy: the machine-readable copyright file, and the changelog of a
# native package, compressed (its first entry must name PROJECT_VERSION:
# tests/package/deb_test.sh checks it).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/changelog.gz
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/cmake/debian/changelog > ${PROJECT_BINARY_DIR}/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/cmake/debian/changelog
  VERBATIM)
add_custom_target(aesmux-changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# A stripped install (the package) also drops the compilers' .comment
# sections, as Debian's dh_strip does: the static C++ runtime and liburing
# bring theirs. The binaries' install rules ran before this one, so the
# install manifest lists them.
if(CMAKE_OBJCOPY)
  string(CONFIGURE [[
    if(CMAKE_INSTALL_DO_STRIP)
      foreach(file IN LISTS CMAKE_INSTALL_MANIFEST_FILES)
        if(file MATCHES "(/bin/aesmux|/aesmux\\.so)$")
          execute_process(COMMAND "@CMAKE_OBJCOPY@" --remove-section=.comment "$ENV{DESTDIR}${file}"
                          COMMAND_ERROR_IS_FATAL ANY)
        endif()
      endforeach()
    endif()]] aesmux_drop_comments @ONLY)
  install(CODE "${aesmux_drop_comments}")
endif()
# The statistics directory README suggests (/var/tmp/aesmux, sticky and
# world-writable), made by systemd-tmpfiles at boot and by the package's
# postinst at once.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/aesmux-tmpfiles.conf
  DESTINATION lib/tmpfiles.d RENAME aesmux.conf)

# cpack -G DEB (in the build directory): aesmux_<version>_<arch>.deb for
# Debian 12. Its dependencies come from dpkg-shlibdeps (dpkg-dev) on what
# is installed: libc6, libgcc-s1, libssl3, libstdc++6, with the versions
# the binaries need (aesmux.so carries liburing, provider/CMakeLists.txt).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME aesmux)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "aesmux maintainers <maintainers@users.noreply.a-seed-f93f3eb7.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "OpenSSL 3 provider for AES: SIMD kernels, multi-buffer CBC, AF_ALG")
set(CPACK_PACKAGE_DESCRIPTION
  "aesmux serves AES-128/192/256 in ECB, CBC, CTR, XTS and GCM to every
OpenSSL 3 program under the default provider's names, through its own
AES-NI/VAES kernels, multi-buffer CBC encryption, the kernel crypto API
(AF_ALG through io_uring) or OpenSSL's default provider, whichever is
fastest for the request. Enable it in /etc/ssl/openssl.cnf as
/usr/share/doc/aesmux/openssl.cnf.example shows; `aesmux info` shows what
it does on this machine.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# utils: the package's command is what a user runs; the module is a plugin
# of OpenSSL's, not a library other packages link.
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
