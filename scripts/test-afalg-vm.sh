#!/usr/bin/env bash
# Runs the afalg suite (tests/afalg/afalg_test, with the path forced) on a
# real kernel: Debian 12's linux-image-6.1.0-*-amd64 booted under qemu (TCG)
# with an initramfs holding busybox, the test binaries, their libraries and
# the crypto modules. Then compares aesmux's afalg path with OpenSSL's own
# afalg engine for AES-128-CBC at 16 KiB, synchronous and -async_jobs 8.
# Prints the gtest summary and the ratios; exits non-zero if a module did
# not load in the guest, /proc/crypto lacks a driver the modules provide, a
# test failed or was skipped (the guest has everything the suite needs), or
# the guest did not report. The recipe is in DEVELOPERS.md.
#
# usage: scripts/test-afalg-vm.sh [--no-bench] [gtest filter]
# Downloads are cached in $AESMUX_BUILD/afalg-vm/cache.
set -euo pipefail
source "$(dirname "$0")/common.sh"

bench=1
if [ "${1:-}" = --no-bench ]; then bench=0; shift; fi
filter=${1:-*}

install_deps qemu-system-x86 busybox-static cpio
build >/dev/null

vm=$AESMUX_BUILD/afalg-vm
cache=$vm/cache
mkdir -p "$cache"

# The kernel: the newest linux-image-6.1.0-N-amd64 apt knows, kept once
# unpacked.
kdir=$(find "$cache" -maxdepth 1 -type d -name 'linux-image-6.1.0-*-amd64' |
       sort -V | tail -n 1)
if [ -z "$kdir" ]; then
  find_kernel() {
    apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' |
      awk '{ print $1 }' | sort -V | tail -n 1
  }
  pkg=$(find_kernel)
  if [ -z "$pkg" ]; then
    apt-get update >/dev/null
    pkg=$(find_kernel)
  fi
  [ -n "$pkg" ] || { echo "no linux-image-6.1.0-*-amd64 package" >&2; exit 1; }
  log "downloading $pkg"
  (cd "$cache" && apt-get download "$pkg" 2>/dev/null &&
     dpkg -x "$pkg"_*.deb "$pkg.tmp" && rm -f "$pkg"_*.deb && mv "$pkg.tmp" "$pkg")
  kdir=$cache/$pkg
fi
kver=${kdir##*/linux-image-}
kernel=$kdir/boot/vmlinuz-$kver
moddir=$kdir/lib/modules/$kver

log "initramfs for $kver"
root=$vm/root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,modules}
cp /bin/busybox "$root/bin/busybox"
for applet in sh mount insmod poweroff cat grep awk echo sleep mkdir ls \
              uname sed head tail timeout; do
  ln -s busybox "$root/bin/$applet"
done

# Modules in dependency order (each after what its depends= line names),
# and the driver /proc/crypto must then name for each algorithm.
want=(af_alg algif_skcipher algif_aead cryptd crypto_simd gf128mul
      ghash-generic ghash-clmulni-intel ecb ctr xts gcm aesni-intel crypto_user)
expected_drivers=('ecb(aes)=ecb-aes-aesni' 'cbc(aes)=cbc-aes-aesni'
                  'ctr(aes)=ctr-aes-aesni' 'xts(aes)=xts-aes-aesni'
                  'gcm(aes)=generic-gcm-aesni')
declare -A placed=()
order=()
place() {
  local name=${1//_/-} file dep
  [ -n "${placed[$name]:-}" ] && return 0
  file=$(find "$moddir/kernel" -name "$1.ko" -o -name "${1//-/_}.ko" |
         head -n 1)
  [ -n "$file" ] || { placed[$name]=builtin; return 0; }
  for dep in $(strings "$file" | sed -n 's/^depends=//p' | tr ',' ' '); do
    place "$dep"
  done
  placed[$name]=$file
  order+=("$file")
}
for module in "${want[@]}"; do place "$module"; done
for file in "${order[@]}"; do cp "$file" "$root/modules/"; done
printf '%s\n' "${order[@]##*/}" >"$root/modules/order"

# Binaries, at the paths they were built with (the tests find aesmux.so by
# its build path), stripped, with every library they load.
copy_with_libs() {
  local file lib
  for file in "$@"; do
    mkdir -p "$root$(dirname "$file")"
    objcopy --strip-debug "$file" "$root$file"
    for lib in $(ldd "$file" | awk '/=>/ { print $3 } /^\t\// { print $1 }'); do
      [ -e "$root$lib" ] && continue
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  done
}
engines=$(openssl version -e | sed 's/^ENGINESDIR: "\(.*\)"$/\1/')
copy_with_libs "$AESMUX_BUILD/tests/afalg/afalg_test" \
  "$AESMUX_BUILD/tests/afalg/afalg_bench" "$AESMUX_BUILD/provider/aesmux.so" \
  "$(command -v openssl)" "$engines/afalg.so"
mkdir -p "$root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"

cat >"$root/init" <<EOF
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
for alg in $(printf "'%s' " "${expected_drivers[@]%%=*}"); do
  awk -v n="\$alg" '\$1 == "name" { name = \$3 } \$1 == "driver" && name == n { print "AFALG-VM: " n " -> " \$3 }' /proc/crypto
done
cd /tmp
export HOME=/tmp OPENSSL_CONF=/dev/null
$AESMUX_BUILD/tests/afalg/afalg_test --gtest_color=no --gtest_filter='$filter'
echo "AFALG-VM: test-exit \$?"
if [ $bench = 1 ]; then
  echo "AFALG-VM: engine \$(openssl engine -t afalg 2>&1 | tr '\n' ' ')"
  for size in 16384; do
    $AESMUX_BUILD/tests/afalg/afalg_bench \$size 2 | sed 's/^/AFALG-VM: staging /'
  done
  export AESMUX_AFALG=force
  for run in 1 2 3; do
    for jobs in 0 8; do
      # -elapsed: wall-clock time (by default speed counts user CPU time
      # only, which leaves out the kernel's work).
      set -- -elapsed -evp aes-128-cbc -bytes 16384 -seconds 2 -mr
      [ \$jobs = 0 ] || set -- "\$@" -async_jobs \$jobs
      e=\$(openssl speed -engine afalg "\$@" 2>/dev/null | awk -F: '/^\+F:/ { print \$4 }')
      a=\$(openssl speed -provider-path $AESMUX_BUILD/provider -provider aesmux \
           -provider default -propquery provider=aesmux "\$@" 2>/dev/null |
           awk -F: '/^\+F:/ { print \$4 }')
      echo "AFALG-VM: speed jobs=\$jobs run=\$run engine=\$e aesmux=\$a"
    done
  done
fi
echo "AFALG-VM: done"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$vm/initramfs.gz"

log "booting $kver under qemu (TCG)"
start=$(date +%s)
set +e
timeout 2400 qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 512 \
  -nographic -no-reboot -kernel "$kernel" -initrd "$vm/initramfs.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3" </dev/null \
  >"$vm/console.log" 2>&1
qemu_status=$?
set -e
# Without carriage returns and the terminal escapes (reset, clear screen)
# the guest's console starts with, so that every line starts with its text.
tr -d '\r' <"$vm/console.log" |
  sed 's/\x1bc//g; s/\x1b\[[0-9;?]*[A-Za-z]//g' >"$vm/console.txt"
echo "  guest ran $(( $(date +%s) - start )) s; console in $vm/console.txt"

grep '^AFALG-VM: .*->' "$vm/console.txt" | sed 's/^AFALG-VM: /  driver: /' || true
# What the guest must have had for its results to mean anything.
guest_problems=()
while read -r line; do
  guest_problems+=("insmod failed: ${line#AFALG-VM: insmod-failed }")
done < <(grep '^AFALG-VM: insmod-failed ' "$vm/console.txt")
for pair in "${expected_drivers[@]}"; do
  grep -qxF "AFALG-VM: ${pair%%=*} -> ${pair#*=}" "$vm/console.txt" ||
    guest_problems+=("/proc/crypto has no ${pair#*=} for ${pair%%=*}")
done
log "gtest summary (afalg_test, afalg = force, kernel $kver)"
sed -n '/^\[==========\] .* ran\./,/^AFALG-VM: test-exit/p' "$vm/console.txt" |
  grep -v '^AFALG-VM'
grep -E '^\[  FAILED  \] .*\([0-9]+ ms\)$' "$vm/console.txt" || true
test_exit=$(sed -n 's/^AFALG-VM: test-exit //p' "$vm/console.txt")

if [ "$bench" = 1 ]; then
  log "aesmux afalg path vs OpenSSL's afalg engine, AES-128-CBC, 16 KiB"
  grep '^AFALG-VM: engine' "$vm/console.txt" | sed 's/^AFALG-VM: /  /' || true
  grep '^AFALG-VM: staging' "$vm/console.txt" |
    awk '{ printf "  %-13s %s bytes: %8.0f requests/s %8.1f MB/s\n", $3, $4, $5, $6 }'
  grep '^AFALG-VM: speed' "$vm/console.txt" | sed 's/^AFALG-VM: /  /'
  grep '^AFALG-VM: speed' "$vm/console.txt" | awk '
    { split($3, j, "="); split($5, e, "="); split($6, a, "=");
      if (e[2] > 0 && a[2] > 0) { n[j[2]]++; r[j[2], n[j[2]]] = a[2] / e[2];
                                  es[j[2]] += e[2]; as[j[2]] += a[2] } }
    END { for (k in n) {
            m = n[k]; for (i = 1; i <= m; i++) v[i] = r[k, i];
            for (i = 1; i <= m; i++) for (x = i + 1; x <= m; x++)
              if (v[x] < v[i]) { t = v[i]; v[i] = v[x]; v[x] = t }
            printf "  async_jobs %s: engine %.1f MB/s, aesmux %.1f MB/s (means); median ratio aesmux/engine %.2f over %d runs\n",
                   k, es[k] / m / 1e6, as[k] / m / 1e6, v[int((m + 1) / 2)], m } }'
fi

if [ "$qemu_status" -ne 0 ] || ! grep -q '^AFALG-VM: done' "$vm/console.txt"; then
  echo "the guest did not finish (qemu status $qemu_status)" >&2
  tail -n 40 "$vm/console.txt" >&2
  exit 1
fi
if [ ${#guest_problems[@]} -ne 0 ]; then
  printf 'the guest lacked what the suite needs:\n' >&2
  printf '  %s\n' "${guest_problems[@]}" >&2
  exit 1
fi
if [ "$test_exit" != 0 ]; then
  echo "afalg_test failed in the guest (exit $test_exit)" >&2
  exit 1
fi
skipped=$(grep -E '^\[  SKIPPED \] .*\([0-9]+ ms\)$' "$vm/console.txt" || true)
if [ -n "$skipped" ]; then
  echo "afalg_test skipped tests in the guest, which has all they need:" >&2
  echo "$skipped" >&2
  exit 1
fi
echo "afalg VM suite passed"
