#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Instructions per AES-GCM record, counted by callgrind, for aesmux and
OpenSSL's default provider.

Runs build/bench/provider/record_bench under callgrind with collection on
only inside its RecordLoop, then splits the instructions of each record:

  total     everything RecordLoop ran (libcrypto's EVP layer included)
  provider  what the provider's dispatch functions ran, the libcrypto
            functions they call included (calls from outside the module
            into it, inclusive), minus the AES-GCM kernels
  kernel    the kernels' own instructions (aesmux's nasm functions, or the
            default provider's assembly); aesmux's C++ kernel glue
            (kernels::SimdGcm: partial blocks, lengths) counts as provider

The split is made for aesmux only: the default provider lives inside
libcrypto, whose internal functions have no symbols in Debian's build, so
only its total is shown.

valgrind cannot run VAES or AVX-512 instructions: aesmux runs on its aesni
tier here (--kernels aesni; none runs its fallback path, the default
provider behind aesmux's dispatch), and OpenSSL's own assembly on whatever its
capability check finds under valgrind.

With --tls the records are TLS 1.2 ones as libssl sends them (the
provider's tlsaad and one EVP_Cipher per record) rather than IV, AAD,
update, final and tag.

  bench/record_cost.py [--build build] [--records 2000]
                       [--bytes 16,1344] [--alg AES-128-GCM] [--tls]
                       [--kernels aesni|none]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

def parse(path):
    """Self cost per (object, function) and inclusive cost per call edge."""
    self_cost = {}
    edges = {}
    names = {'ob': {}, 'fn': {}}
    ob = fn = None
    cob = cfn = None
    pending_call = False

    def name(kind, text):
        m = re.match(r'\((\d+)\)(?: (.*))?$', text)
        if not m:
            return text
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind][m.group(1)]

    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('ob='):
                ob = name('ob', line[3:])
            elif line.startswith('fn='):
                fn = name('fn', line[3:])
                cob = cfn = None
            elif line.startswith('cob='):
                cob = name('ob', line[4:])
            elif line.startswith('cfn='):
                cfn = name('fn', line[4:])
            elif line.startswith(('fl=', 'fi=', 'fe=', 'cfi=', 'cfl=')):
                continue
            elif line.startswith('calls='):
                pending_call = True
            elif line and (line[0].isdigit() or line[0] in '+-*'):
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    key = (ob, fn, cob or ob, cfn)
                    edges[key] = edges.get(key, 0) + cost
                    pending_call = False
                    cob = cfn = None
                else:
                    key = (ob, fn)
                    self_cost[key] = self_cost.get(key, 0) + cost
    return self_cost, edges


def asm_symbols(build):
    """Every symbol of aesmux's nasm objects: its kernels."""
    objects = []
    for root, _, files in os.walk(os.path.join(build, 'kernels')):
        objects += [os.path.join(root, f) for f in files
                    if f.endswith('.asm.o')]
    out = subprocess.run(['nm', '--defined-only'] + objects, check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[2] for line in out.splitlines()
            if len(line.split()) == 3}


def split(self_cost, edges, provider, asm):
    total = sum(self_cost.values())
    if provider == 'aesmux':
        in_module = lambda ob, fn: ob is not None and ob.endswith('aesmux.so')
        # The kernels' local labels have no symbol of their own in
        # callgrind's eyes (0x…); every C++ function has one.
        kernel = sum(c for (ob, fn), c in self_cost.items()
                     if in_module(ob, fn) and (fn in asm or fn.startswith('0x')))
        inclusive = sum(c for (ob, fn, cob, cfn), c in edges.items()
                        if not in_module(ob, fn) and in_module(cob, cfn))
        return total, inclusive - kernel, kernel
    return total, None, None


def run(args, provider, size, decrypt, asm):
    bench = os.path.join(args.build, 'bench/provider/record_bench')
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'cg.out')
        cmd = ['valgrind', '--tool=callgrind', '--toggle-collect=RecordLoop',
               '--compress-strings=no', '--compress-pos=no',
               '--callgrind-out-file=' + out, bench,
               '--provider', provider, '--alg', args.alg, '--bytes', str(size),
               '--records', str(args.records), '--kernels', args.kernels]
        if decrypt:
            cmd.append('--decrypt')
        if args.tls:
            cmd.append('--tls')
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return split(*parse(out), provider, asm)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--build', default='build')
    parser.add_argument('--records', type=int, default=2000)
    parser.add_argument('--bytes', default='16,1344')
    parser.add_argument('--alg', default='AES-128-GCM')
    parser.add_argument('--tls', action='store_true')
    parser.add_argument('--kernels', default='aesni')
    args = parser.parse_args()
    kind = 'TLS 1.2 record' if args.tls else 'record'
    print(f'{args.alg}, instructions per {kind} ({args.records} records, '
          f'callgrind; aesmux on its {args.kernels} tier)\n')
    print('| bytes | direction | side | total | provider | kernel |')
    print('|---|---|---|---|---|---|')
    asm = asm_symbols(args.build)
    for size in [int(s) for s in args.bytes.split(',')]:
        for decrypt in (False, True):
            for provider in ('aesmux', 'default'):
                total, own, kernel = run(args, provider, size, decrypt, asm)
                n = args.records
                cells = [str(total // n)] + (
                    [str(own // n), str(kernel // n)] if own is not None
                    else ['–', '–'])
                print(f'| {size} | {"decrypt" if decrypt else "encrypt"} | '
                      f'{provider} | ' + ' | '.join(cells) + ' |', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
