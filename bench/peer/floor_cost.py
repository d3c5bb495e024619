#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Instructions per AES-GCM record that OpenSSL 3's libcrypto runs itself,
counted by callgrind, for evp_floor_bench's floor providers and aesmux,
next to BoringSSL's whole record.

Runs build/bench/peer/evp_floor_bench --count SIDE under callgrind with
collection on only inside its FloorRecordLoop (the same record as
peer_bench: IV, 13 bytes of AAD, update, final, tag), and splits each
record with bench/record_cost.py's parser:

  record     everything the record ran, less the bench's own loop (a few
             instructions)
  libcrypto  what ran outside the provider: libcrypto's EVP layer and
             the libc calls it makes (record - provider - kernel)
  provider   what the provider's dispatch functions ran, the libcrypto
             functions they call included, minus the kernels
  kernel     aesmux's nasm code (floor_thin links the same kernels)

SIDE is nothing (floor_nothing: no cryptography, so its libcrypto column
is libcrypto's own cost per record), thin (floor_thin: the real work on
aesmux's kernels with the least glue) or aesmux. BoringSSL's record is
peer_bench_boringssl's, the same calls, driven through its pipe protocol;
only its whole record is shown. valgrind cannot run VAES or AVX-512
instructions, so aesmux and floor_thin run the aesni tier and BoringSSL
what it picks on valgrind's CPU (its AES-NI/AVX code); the libcrypto column
does not depend on the tier.

  bench/peer/floor_cost.py [--build build] [--records 1000]
                           [--bytes 16,256,1344] [--key-bits 128]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
import record_cost  # noqa: E402  (parse, asm_symbols)


def in_provider(side, ob, fn):
    """Whether (ob, fn) is the provider's code."""
    if ob is None or fn is None:
        return False
    if side == 'aesmux':
        return ob.endswith('aesmux.so')
    # The floor providers live in the bench program, as class FloorGcm.
    return ob.endswith('evp_floor_bench') and 'FloorGcm' in fn


def bench_loop(self_cost, program):
    """The bench's own instructions around the records."""
    return sum(c for (ob, fn), c in self_cost.items()
               if ob is not None and ob.endswith(program) and
               ('RecordLoop' in fn or 'Records::' in fn))


def split(self_cost, edges, side, asm):
    record = sum(self_cost.values()) - bench_loop(self_cost, 'evp_floor_bench')
    kernel = sum(c for (ob, fn), c in self_cost.items()
                 if ob is not None and
                 (ob.endswith('aesmux.so') or ob.endswith('evp_floor_bench'))
                 and (fn in asm or fn.startswith('0x')))
    inclusive = sum(c for (ob, fn, cob, cfn), c in edges.items()
                    if not in_provider(side, ob, fn) and
                    in_provider(side, cob, cfn))
    provider = inclusive - kernel
    return record, record - provider - kernel, provider, kernel


def run_boringssl(args, bits, size, decrypt):
    """peer_bench_boringssl's records, whole: (record, None, None, None)."""
    bench = os.path.join(args.build, 'bench/peer/peer_bench_boringssl')
    commands = (f'setup gcm {bits} {"dec" if decrypt else "enc"} {size}\n'
                f'time {args.records}\n')
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'cg.out')
        cmd = ['valgrind', '--tool=callgrind',
               '--toggle-collect=*Records::Seconds*',
               '--compress-strings=no', '--compress-pos=no',
               '--callgrind-out-file=' + out, bench]
        subprocess.run(cmd, check=True, input=commands, text=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self_cost, _ = record_cost.parse(out)
        return (sum(self_cost.values()) -
                bench_loop(self_cost, 'peer_bench_boringssl'),
                None, None, None)


def run(args, side, bits, size, decrypt, asm):
    bench = os.path.join(args.build, 'bench/peer/evp_floor_bench')
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'cg.out')
        cmd = ['valgrind', '--tool=callgrind',
               '--toggle-collect=FloorRecordLoop',
               '--compress-strings=no', '--compress-pos=no',
               '--callgrind-out-file=' + out, bench, '--count', side,
               '--tier', 'aesni', '--key-bits', str(bits),
               '--sizes', str(size), '--dirs', 'dec' if decrypt else 'enc',
               '--records', str(args.records)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return split(*record_cost.parse(out), side, asm)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--build', default='build')
    parser.add_argument('--records', type=int, default=1000)
    parser.add_argument('--bytes', default='16,256,1344')
    parser.add_argument('--key-bits', type=int, default=128)
    args = parser.parse_args()
    print(f'AES-{args.key_bits}-GCM, instructions per record '
          f'({args.records} records, callgrind; aesni tier)\n')
    print('| bytes | direction | side | record | libcrypto | provider | '
          'kernel |')
    print('|---:|---|---|---:|---:|---:|---:|')
    asm = record_cost.asm_symbols(args.build)
    for size in [int(s) for s in args.bytes.split(',')]:
        for decrypt in (False, True):
            for side in ('boringssl', 'nothing', 'thin', 'aesmux'):
                cells = (run_boringssl(args, args.key_bits, size, decrypt)
                         if side == 'boringssl' else
                         run(args, side, args.key_bits, size, decrypt, asm))
                print(f'| {size} | {"decrypt" if decrypt else "encrypt"} | '
                      f'{side} | ' +
                      ' | '.join('–' if c is None else str(c // args.records)
                                 for c in cells) + ' |', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
