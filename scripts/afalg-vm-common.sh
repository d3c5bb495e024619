# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
# Shared by the scripts that run the afalg suite on Debian's own kernel under
# qemu (test-afalg-vm.sh for amd64, test-afalg-vm-arm64.sh for arm64): the
# kernel package, an initramfs with busybox, the crypto modules and the test
# binaries with their libraries, the guest's init, the boot and the report.
# Source it after common.sh; it defines functions only. The recipe is in
# DEVELOPERS.md.
#
# The guest's init prints lines starting with "AFALG-VM: " on the console:
#   insmod-failed <module>: <error>   a module that did not load
#   <alg> -> <driver>          a driver /proc/crypto lists for <alg>
#   test-exit <status>         afalg_test's exit status
#   done                       the last line before power-off

# vm_options [--no-bench] [FILTER]: the VM scripts' arguments. Sets
# vm_bench (1, or 0 with --no-bench) and vm_filter (afalg_test's gtest
# filter, * by default).
vm_options() {
  vm_bench=1
  if [ "${1:-}" = --no-bench ]; then vm_bench=0; shift; fi
  vm_filter=${1:-*}
}

# vm_setup ARCH BUILD: where this VM's files go ($BUILD/afalg-vm, or
# afalg-vm-ARCH for another architecture than the host's), the kernel cache
# included. Sets vm_arch, vm, vm_cache and vm_root, and the host's tools for
# the guest's binaries, which a script for another architecture replaces:
# vm_objcopy, and vm_list_libs (a command that prints what ldd prints for
# its argument).
vm_setup() {
  vm_arch=$1
  vm=$2/afalg-vm
  [ "$vm_arch" = "$(dpkg --print-architecture)" ] || vm=$vm-$vm_arch
  vm_cache=$vm/cache
  vm_root=$vm/root
  vm_objcopy=objcopy
  vm_list_libs=ldd
  mkdir -p "$vm_cache"
}

# vm_fetch_kernel: the newest linux-image-6.1.0-N-$vm_arch apt knows,
# unpacked once into the cache. Sets vm_kver, vm_kernel (the image) and
# vm_moddir.
vm_fetch_kernel() {
  local kdir pkg
  kdir=$(find "$vm_cache" -maxdepth 1 -type d \
           -name "linux-image-6.1.0-*-$vm_arch" | sort -V | tail -n 1)
  if [ -z "$kdir" ]; then
    pkg=$(vm_newest_kernel)
    if [ -z "$pkg" ]; then
      apt-get update >/dev/null
      pkg=$(vm_newest_kernel)
    fi
    [ -n "$pkg" ] ||
      { echo "no linux-image-6.1.0-*-$vm_arch package" >&2; return 1; }
    log "downloading $pkg"
    (cd "$vm_cache" && apt-get download "$pkg" 2>/dev/null &&
       dpkg -x "$pkg"_*.deb "$pkg.tmp" && rm -f "$pkg"_*.deb &&
       mv "$pkg.tmp" "$pkg")
    kdir=$vm_cache/$pkg
  fi
  vm_kver=${kdir##*/linux-image-}
  vm_kernel=$kdir/boot/vmlinuz-$vm_kver
  vm_moddir=$kdir/lib/modules/$vm_kver
}

vm_newest_kernel() {
  apt-cache search --names-only "^linux-image-6\\.1\\.0-[0-9]+-$vm_arch\$" |
    awk '{ print $1 }' | sort -V | tail -n 1
}

# vm_new_root BUSYBOX: an empty root with the (static) busybox binary
# BUSYBOX and links for the applets the init script uses.
vm_new_root() {
  local applet
  rm -rf "$vm_root"
  mkdir -p "$vm_root"/{bin,sbin,proc,sys,dev,tmp,etc,modules}
  cp "$1" "$vm_root/bin/busybox"
  for applet in sh mount insmod poweroff cat grep awk echo sleep mkdir ls \
                uname sed head tail timeout; do
    ln -s busybox "$vm_root/bin/$applet"
  done
}

# vm_add_modules MODULE...: the modules and what they depend on, in
# dependency order (each after what its depends= line names), for the init
# script to insmod. Modules built into the kernel are skipped.
vm_add_modules() {
  local module file
  local -A placed=()
  local order=()
  for module in "$@"; do vm_place_module "$module"; done
  for file in "${order[@]}"; do cp "$file" "$vm_root/modules/"; done
  printf '%s\n' "${order[@]##*/}" >"$vm_root/modules/order"
}

# Appends MODULE's file, after its dependencies', to the caller's `order`,
# once (the caller's `placed` remembers).
vm_place_module() {
  local name=${1//_/-} file dep
  [ -n "${placed[$name]:-}" ] && return 0
  file=$(find "$vm_moddir/kernel" -name "$1.ko" -o -name "${1//-/_}.ko" |
         head -n 1)
  [ -n "$file" ] || { placed[$name]=builtin; return 0; }
  for dep in $(strings "$file" | sed -n 's/^depends=//p' | tr ',' ' '); do
    vm_place_module "$dep"
  done
  placed[$name]=$file
  order+=("$file")
}

# vm_add_binaries FILE...: each FILE at its own path (the tests find
# aesmux.so by its build path), stripped of debug information, with every
# library it loads.
vm_add_binaries() {
  local file lib
  for file in "$@"; do
    mkdir -p "$vm_root$(dirname "$file")"
    $vm_objcopy --strip-debug "$file" "$vm_root$file"
    for lib in $($vm_list_libs "$file" |
                 awk '/=>/ { print $3 } /^\t\// { print $1 }'); do
      [ -e "$vm_root$lib" ] && continue
      mkdir -p "$vm_root$(dirname "$lib")"
      cp -L "$lib" "$vm_root$lib"
    done
  done
}

# vm_write_init AFALG_TEST FILTER EXTRA: the guest's init: mounts, insmods
# the modules, prints the driver of each algorithm, runs AFALG_TEST with the
# gtest FILTER, then the shell commands EXTRA (may be empty), and powers
# off. AESMUX_HUNG_CHILD_STACKS and AESMUX_STRESS_SECONDS reach the guest.
vm_write_init() {
  local afalg_test=$1 filter=$2 extra=$3
  cat >"$vm_root/init" <<EOF
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in \$(cat /modules/order); do
  if ! error=\$(insmod /modules/\$m 2>&1); then
    echo "AFALG-VM: insmod-failed \$m: \$error"
  fi
done
echo "AFALG-VM: kernel \$(uname -r)"
for alg in 'ecb(aes)' 'cbc(aes)' 'ctr(aes)' 'xts(aes)' 'gcm(aes)'; do
  awk -v n="\$alg" '\$1 == "name" { name = \$3 } \$1 == "driver" && name == n { print "AFALG-VM: " n " -> " \$3 }' /proc/crypto
done
cd /tmp
export HOME=/tmp OPENSSL_CONF=/dev/null
${AESMUX_HUNG_CHILD_STACKS:+export AESMUX_HUNG_CHILD_STACKS=$AESMUX_HUNG_CHILD_STACKS}
${AESMUX_STRESS_SECONDS:+export AESMUX_STRESS_SECONDS=$AESMUX_STRESS_SECONDS}
$afalg_test --gtest_color=no --gtest_filter='$filter'
echo "AFALG-VM: test-exit \$?"
$extra
echo "AFALG-VM: done"
poweroff -f
EOF
  chmod +x "$vm_root/init"
}

# vm_boot QEMU_COMMAND...: packs the root into an initramfs and boots the
# kernel with it (the command's own options come first; -kernel, -initrd,
# -nographic and the rest are added). The console goes to
# $vm/console.txt; sets vm_qemu_status.
vm_boot() {
  local console=$1
  shift
  (cd "$vm_root" && find . | cpio -o -H newc --quiet | gzip -1) \
    >"$vm/initramfs.gz"
  log "booting $vm_kver under qemu (TCG)"
  local start
  start=$(date +%s)
  set +e
  timeout 2400 "$@" -nographic -no-reboot -kernel "$vm_kernel" \
    -initrd "$vm/initramfs.gz" \
    -append "console=$console panic=-1 quiet loglevel=3" </dev/null \
    >"$vm/console.log" 2>&1
  vm_qemu_status=$?
  set -e
  # Without carriage returns and the terminal escapes (reset, clear screen)
  # the console starts with, so that every line starts with its text.
  tr -d '\r' <"$vm/console.log" |
    sed 's/\x1bc//g; s/\x1b\[[0-9;?]*[A-Za-z]//g' >"$vm/console.txt"
  echo "  guest ran $(( $(date +%s) - start )) s; console in $vm/console.txt"
}

# vm_report_tests: the drivers the guest found and afalg_test's summary.
vm_report_tests() {
  grep '^AFALG-VM: .*->' "$vm/console.txt" | sed 's/^AFALG-VM: /  driver: /' ||
    true
  log "gtest summary (afalg_test, kernel $vm_kver)"
  sed -n '/^\[==========\] .* ran\./,/^AFALG-VM: test-exit/p' \
    "$vm/console.txt" | grep -v '^AFALG-VM'
  grep -E '^\[  FAILED  \] .*\([0-9]+ ms\)$' "$vm/console.txt" || true
}

# vm_check_modules: fails, saying why, if any module did not load.
vm_check_modules() {
  local failed
  failed=$(sed -n 's/^AFALG-VM: insmod-failed /  /p' "$vm/console.txt")
  if [ -n "$failed" ]; then
    printf 'modules that did not load in the guest:\n%s\n' "$failed" >&2
    return 1
  fi
}

# vm_check_drivers ALG=DRIVER...: fails unless the guest's /proc/crypto
# listed each DRIVER for its ALG (cbc(aes)=cbc-aes-ce).
vm_check_drivers() {
  local want alg status=0
  for want in "$@"; do
    alg=${want%%=*}
    if ! grep -qxF "AFALG-VM: $alg -> ${want#*=}" "$vm/console.txt"; then
      echo "/proc/crypto has no ${want#*=} for $alg" >&2
      status=1
    fi
  done
  return $status
}

# vm_check_no_skips: fails if afalg_test skipped a test in the guest, which
# has everything the suite needs.
vm_check_no_skips() {
  local skipped
  skipped=$(grep -E '^\[  SKIPPED \] .*\([0-9]+ ms\)$' "$vm/console.txt" ||
            true)
  if [ -n "$skipped" ]; then
    printf 'afalg_test skipped tests in the guest:\n%s\n' "$skipped" >&2
    return 1
  fi
}

# vm_check_exit TAG PROGRAM [PREFIX]: fails unless the guest reported
# "AFALG-VM: TAG 0" (PROGRAM's exit status); on failure shows the last of
# the console lines PROGRAM's output was tagged with (PREFIX), if any.
vm_check_exit() {
  local tag=$1 program=$2 prefix=${3:-} exit_status
  exit_status=$(sed -n "s/^AFALG-VM: $tag //p" "$vm/console.txt")
  [ "$exit_status" = 0 ] && return 0
  echo "$program failed in the guest (exit ${exit_status:-none})" >&2
  if [ -n "$prefix" ]; then
    grep "^$prefix: " "$vm/console.txt" | tail -n 40 >&2
  fi
  return 1
}

# vm_check_done: fails unless the guest finished and afalg_test passed.
vm_check_done() {
  if [ "$vm_qemu_status" -ne 0 ] || ! grep -q '^AFALG-VM: done' "$vm/console.txt"; then
    echo "the guest did not finish (qemu status $vm_qemu_status)" >&2
    tail -n 40 "$vm/console.txt" >&2
    return 1
  fi
  vm_check_exit test-exit afalg_test
}
