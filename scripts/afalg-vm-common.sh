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
#   device-count <label> ok <data> <control>   the device's request counts
#   done                       the last line before power-off
#
# The machine has QEMU's virtio-crypto device (cryptodev-backend-builtin:
# AES-CBC done by QEMU, outside the guest's CPU), whose guest driver
# (virtio_crypto_aes_cbc) is the stand-in for a board's offload engine,
# and a virtio-serial port named aesmux.control through which the guest
# asks the host (scripts/vm-control.py) for the device's request counts
# and to remove the device: the guest's shell function vm_count LABEL, and
# AFALG_VM_CONTROL (the port's path) for test programs. The host's log of
# it is $vm/control.log.

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
                uname sed head tail timeout basename kill dmesg; do
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

# vm_write_init AFALG_TEST FILTER EXTRA [CLI]: the guest's init: mounts,
# insmods the modules, prints the driver of each algorithm, runs AFALG_TEST
# (unless empty) with the gtest FILTER (its statistics in
# /tmp/stats/afalg_test, the device's request counts taken before and
# after), prints what the aesmux command CLI (if given) sums of those
# statistics, then runs the shell commands EXTRA (may be empty), and powers
# off. AESMUX_TEST_HUNG_CHILD_STACKS and AESMUX_TEST_STRESS_SECONDS reach
# the guest.
vm_write_init() {
  local afalg_test=$1 filter=$2 extra=$3 cli=${4:-} tests=
  if [ -n "$afalg_test" ]; then
    tests=$(cat <<EOF
vm_count before-tests
AESMUX_STATS_FILE=/tmp/stats/afalg_test $afalg_test --gtest_color=no --gtest_filter='$filter'
echo "AFALG-VM: test-exit \$?"
vm_count after-tests
${cli:+$cli stats /tmp/stats/afalg_test | sed 's/^/AFALG-STATS: /'}
EOF
)
  fi
  cat >"$vm_root/init" <<EOF
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
for m in \$(cat /modules/order); do
  if ! error=\$(insmod /modules/\$m 2>&1); then
    echo "AFALG-VM: insmod-failed \$m: \$error"
  fi
done
echo "AFALG-VM: kernel \$(uname -r)"
for alg in 'ecb(aes)' 'cbc(aes)' 'ctr(aes)' 'xts(aes)' 'gcm(aes)'; do
  awk -v n="\$alg" '\$1 == "name" { name = \$3 } \$1 == "driver" && name == n { print "AFALG-VM: " n " -> " \$3 }' /proc/crypto
done
# Each virtio device (its id: 20 is crypto) and the driver bound to it,
# if any: a device the driver refused shows here and nowhere else.
for dev in /sys/bus/virtio/devices/*; do
  [ -e "\$dev/device" ] || continue
  driver=\$(readlink "\$dev/driver" 2>/dev/null)
  echo "AFALG-VM: virtio \$(basename \$dev) device \$(cat \$dev/device) driver \${driver##*/}"
done
# The control port (vm-control.py on the host).
for port in /sys/class/virtio-ports/*; do
  [ "\$(cat \$port/name 2>/dev/null)" = aesmux.control ] &&
    export AFALG_VM_CONTROL=/dev/\$(basename \$port)
done
vm_count() {
  [ -n "\$AFALG_VM_CONTROL" ] || return 0
  exec 3<>"\$AFALG_VM_CONTROL"
  echo "count \$1" >&3
  read -r reply <&3
  exec 3>&-
  echo "AFALG-VM: device-count \$1 \$reply"
}
cd /tmp
mkdir -p /tmp/stats
export HOME=/tmp OPENSSL_CONF=/dev/null
${AESMUX_TEST_HUNG_CHILD_STACKS:+export AESMUX_TEST_HUNG_CHILD_STACKS=$AESMUX_TEST_HUNG_CHILD_STACKS}
${AESMUX_TEST_STRESS_SECONDS:+export AESMUX_TEST_STRESS_SECONDS=$AESMUX_TEST_STRESS_SECONDS}
$tests
$extra
vm_count end
echo "AFALG-VM: done"
poweroff -f
EOF
  chmod +x "$vm_root/init"
}

# vm_devices TRANSPORT: qemu options for the virtio-crypto device (id
# crypto0) and the control port, on TRANSPORT "pci" (x86's pc machine) or
# "device" (virtio-mmio, arm64's virt machine).
vm_devices() {
  echo "-object cryptodev-backend-builtin,id=cryptodev0" \
    "-device virtio-crypto-$1,id=crypto0,cryptodev=cryptodev0" \
    "-device virtio-serial-$1,id=serial0" \
    "-chardev socket,id=control,path=$vm/control.sock,server=on,wait=off" \
    "-device virtserialport,bus=serial0.0,chardev=control,name=aesmux.control"
}

# vm_boot QEMU_COMMAND...: packs the root into an initramfs and boots the
# kernel with it (the command's own options come first; -kernel, -initrd,
# -nographic, the monitor and the rest are added), with vm-control.py
# answering the guest on the control port. The console goes to
# $vm/console.txt; sets vm_qemu_status.
vm_boot() {
  local console=$1
  shift
  (cd "$vm_root" && find . | cpio -o -H newc --quiet | gzip -1) \
    >"$vm/initramfs.gz"
  log "booting $vm_kver under qemu (TCG)"
  local start qemu control
  start=$(date +%s)
  rm -f "$vm/qmp.sock" "$vm/control.sock" "$vm/control.log"
  set +e
  timeout 2400 "$@" -nographic -no-reboot -kernel "$vm_kernel" \
    -initrd "$vm/initramfs.gz" -qmp "unix:$vm/qmp.sock,server=on,wait=off" \
    -append "console=$console panic=-1 quiet loglevel=3" </dev/null \
    >"$vm/console.log" 2>&1 &
  qemu=$!
  python3 "$AESMUX_ROOT/scripts/vm-control.py" "$vm/qmp.sock" \
    "$vm/control.sock" "$vm/control.log" &
  control=$!
  wait $qemu
  vm_qemu_status=$?
  wait $control
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
  [ $status = 0 ] || sed -n 's/^AFALG-VM: virtio /  virtio /p' "$vm/console.txt" >&2
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

# vm_policy_lines CLI MODULES_DIR: shell lines for the guest's init that
# print each family's afalg state under afalg = auto and force, as `aesmux
# info` shows it, as "AFALG-VM: policy <policy> <family> <state>".
vm_policy_lines() {
  cat <<EOF
for policy in auto force; do
  AESMUX_AFALG=\$policy OPENSSL_MODULES=$2 $1 info |
    sed -n "/^afalg probe per family/,/^\$/ s/^  \([a-z]*\)  */AFALG-VM: policy \$policy \1 /p"
done
EOF
}

# vm_check_policies CPU_DRIVER: fails unless `aesmux info` showed, under
# auto, cbc on the virtio driver (bound by its name: a CPU driver of
# higher priority is there too) and every other family off for want of
# an offload driver (its best driver CPU software), and under force cbc on
# the virtio driver and every other family on a driver matching the
# extended regular expression CPU_DRIVER (the kernel's CPU code).
vm_check_policies() {
  local errors
  grep '^AFALG-VM: policy' "$vm/console.txt" | sed 's/^AFALG-VM: policy /  /'
  errors=$(grep '^AFALG-VM: policy' "$vm/console.txt" | awk -v cpu="$1" '
    { n[$3]++; state = $0; sub(/^AFALG-VM: policy [a-z]+ [a-z]+ /, "", state) }
    $4 == "cbc" && state !~ "^on \\(" $3 "\\) from [0-9]+ bytes: virtio_crypto_aes_cbc \\(.*offload driver, bound by its driver name over " { print; next }
    $4 == "cbc" { next }
    $3 == "auto" && state !~ /^off \(auto\): .*\(CPU software\)$/ { print; next }
    $3 == "force" && state !~ "^on \\(force\\) from 0 bytes: (" cpu ") " { print }
    END { if (n["auto"] != 5 || n["force"] != 5) print "expected 5 families under each policy" }')
  if [ -n "$errors" ]; then
    echo "aesmux's afalg policies did not do what they should:" >&2
    echo "$errors" >&2
    return 1
  fi
}

# vm_check_device_work: fails unless the virtio-crypto device completed at
# least as many requests while afalg_test ran as aesmux's statistics count
# on the afalg path for AES-*-CBC (each such request is one device request,
# or more when longer than one AF_ALG request), and that is more than none:
# CBC's requests reached the virtio driver, not the kernel's CPU code.
vm_check_device_work() {
  local before after device served
  before=$(sed -n 's/^count before-tests \([0-9]*\) .*/\1/p' "$vm/control.log")
  after=$(sed -n 's/^count after-tests \([0-9]*\) .*/\1/p' "$vm/control.log")
  served=$(awk '$1 ~ /-CBC$/ && $2 == "afalg" { n += $3 } END { print n + 0 }' \
             <(sed -n 's/^AFALG-STATS: //p' "$vm/console.txt"))
  if [ -z "$before" ] || [ -z "$after" ]; then
    echo "no request counts from the virtio-crypto device (control.log)" >&2
    return 1
  fi
  device=$((after - before))
  echo "  virtio-crypto completed $device requests while afalg_test ran;" \
    "aesmux's statistics: $served AES-*-CBC requests on the afalg path"
  if [ "$served" -eq 0 ] || [ "$device" -lt "$served" ]; then
    echo "CBC's afalg requests did not all reach the virtio-crypto device" >&2
    return 1
  fi
}

# vm_removal_lines TEST CLI MODULES_DIR: shell lines for the guest's init
# that run TEST (device_removal_test: the device unplugged under running
# streams) and print its output as "REMOVAL-TEST: " lines, then
# "AFALG-VM: removal-exit <status>", or "hung" if the process has not ended
# 3 s after gtest's summary (a thread whose request the driver lost never
# finishes exiting), the kernel's messages about the driver as
# "REMOVAL-KERNEL: " lines, and what `aesmux info` (CLI) says of cbc in a
# new process as "AFALG-VM: after-removal <state>". It must be the last
# test the guest runs.
vm_removal_lines() {
  cat <<EOF
$1 --gtest_color=no >/tmp/removal.log 2>&1 &
removal=\$!
i=0
while [ \$i -lt 400 ] && ! grep -qE '^\[  (PASSED|FAILED) +\]' /tmp/removal.log; do
  kill -0 \$removal 2>/dev/null || break
  sleep 1; i=\$((i + 1))
done
i=0
while [ \$i -lt 3 ] && kill -0 \$removal 2>/dev/null; do sleep 1; i=\$((i + 1)); done
sed 's/^/REMOVAL-TEST: /' /tmp/removal.log
if kill -0 \$removal 2>/dev/null; then
  echo "AFALG-VM: removal-exit hung"
  for task in /proc/\$removal/task/*; do
    echo "REMOVAL-TASK: \$(cat \$task/comm) \$(cut -d' ' -f3 \$task/stat) \$(cat \$task/wchan)"
    sed 's/^/REMOVAL-TASK:   /' \$task/stack 2>/dev/null
  done
else
  wait \$removal
  echo "AFALG-VM: removal-exit \$?"
fi
dmesg | grep -iE 'virtio.crypto|WARNING|general protection|BUG:|Oops|Out of memory' | sed 's/^/REMOVAL-KERNEL: /'
OPENSSL_MODULES=$3 $2 info | sed -n 's/^  cbc  */AFALG-VM: after-removal /p'
EOF
}

# vm_check_removal: fails unless device_removal_test passed and skipped
# nothing (its exit may hang in the kernel: see vm_removal_lines), and
# `aesmux info` in a new process then found no offload driver for cbc.
vm_check_removal() {
  local exit_status
  grep -E '^REMOVAL-TEST: (\[ +(OK|FAILED|SKIPPED) +\]|[0-9]+ requests|afalg.cbc:|.*Failure$)' \
    "$vm/console.txt" | sed 's/^REMOVAL-TEST: /  /' || true
  exit_status=$(sed -n 's/^AFALG-VM: removal-exit //p' "$vm/console.txt")
  echo "  exit: ${exit_status:-none}"
  sed -n 's/^AFALG-VM: after-removal /  aesmux info then: cbc /p' "$vm/console.txt"
  grep -E '^REMOVAL-KERNEL: .*(virtcrypto_remove|crypto_unregister_alg|could not stop|general protection|Oops|BUG:|Out of memory)' \
    "$vm/console.txt" | sed 's/^REMOVAL-KERNEL: /  kernel: /' || true
  if ! grep -q '^REMOVAL-TEST: \[  PASSED  \] 1 test\.' "$vm/console.txt" ||
     grep -q '^REMOVAL-TEST: \[  SKIPPED \]' "$vm/console.txt" ||
     ! grep -q '^AFALG-VM: after-removal off (auto): no offload driver' \
       "$vm/console.txt"; then
    echo "device_removal_test did not pass in the guest" >&2
    grep '^REMOVAL-TEST: ' "$vm/console.txt" | tail -n 30 >&2
    grep '^REMOVAL-TASK: ' "$vm/console.txt" | head -n 80 >&2 || true
    return 1
  fi
}
