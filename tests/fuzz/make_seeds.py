#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""Writes the hand-made seeds of the fuzz corpus (tests/fuzz/corpus/).

Each seed is a short program in the input encoding that differential.cc
decodes: a configuration byte, then per operation an opcode byte, a slot
byte and the operation's own bytes. The helpers below emit those bytes in
the order the harness reads them; keep them in step with differential.cc
(Harness::RunSequenceOp and the functions it calls). Run from anywhere:

    tests/fuzz/make_seeds.py

The regression-* files in the corpus are inputs the fuzzers found (each
named after the defect it found); they are kept as found, not written here.
"""

import os
import struct

CONFIGS = ["auto", "vaes_avx512", "vaes_avx2", "aesni", "none", "mb_off",
           "thresholds"]
CIPHERS = ["AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC",
           "AES-192-CBC", "AES-256-CBC", "AES-128-CTR", "AES-192-CTR",
           "AES-256-CTR", "AES-128-XTS", "AES-256-XTS", "AES-128-GCM",
           "AES-192-GCM", "AES-256-GCM"]
KEY_LEN = {c: (int(c[4:7]) // 8) * (2 if "XTS" in c else 1) for c in CIPHERS}
PARAM_KEYS = ["padding", "num", "ivlen", "keylen", "tag", "taglen", "tlsaad",
              "tlsivfixed", "tlsivgen", "tlsivinv", "tls-version",
              "tls-mac-size", "tls-mac", "updated-iv", "iv", "use-bits",
              "cts_mode", "tlsaadpad", "blocksize", "mode", "aead",
              "custom-iv", "randkey", "speed", "rounds", "alg_id_param",
              "tls1multi_maxbufsz", "xts_standard", "", "iv ",
              "no-such-parameter"]
VALUES = [0, 1, 4, 5, 8, 12, 13, 15, 16, 17, 20, 32, 48, 64, 65, 128, 129,
          0x0300, 0x0301, 0x0302, 0x0303, 0xfeff, 0xfefd, 0x0100, 0x7fffffff,
          0xffffffff, 2**64 - 1, 0x10000, 255, 256, 1000, 3]
# Opcodes (any value the harness maps to the operation; mod 32).
OP_INIT, OP_UPDATE, OP_CIPHER, OP_FINAL = 0, 6, 13, 16
OP_GET, OP_PADDING, OP_NUM, OP_COPY, OP_RESET, OP_FREE, OP_SET1 = (
    21, 23, 24, 27, 29, 30, 31)
# Init APIs.
CIPHER_INIT_EX, CIPHER_INIT_EX2, ENCRYPT_INIT_EX, DECRYPT_INIT_EX = 0, 1, 2, 3
ENCRYPT_INIT_EX2, DECRYPT_INIT_EX2 = 4, 5
# Data calls and shapes.
CIPHER_UPDATE, ENCRYPT_UPDATE, DECRYPT_UPDATE = 0, 1, 2
OUT_OF_PLACE, IN_PLACE, AAD, NO_INPUT = 0, 1, 2, 3


class Seed:
    def __init__(self, config="auto"):
        self.b = bytearray([CONFIGS.index(config)])
        self.cipher = [None] * 4  # each slot's cipher, as the harness sees it
        self.last_out = [False] * 4

    def _op(self, code, slot):
        self.b += bytes([code, slot])

    def init(self, slot, cipher=None, api=CIPHER_INIT_EX, enc=1, key=None,
             iv=None, param=None):
        """cipher: a name, or None to re-init; key: None, "A", "B", bytes or
        ("dup", half); iv: None or bytes; param: None or (key, value)."""
        self._op(OP_INIT, slot)
        if cipher is None:
            assert self.cipher[slot] is not None
            self.b.append(0)
        else:
            self.b.append(2)
            self.b.append(CIPHERS.index(cipher))
            self.cipher[slot] = cipher
            self.last_out[slot] = False
        self.b.append(api)
        self.b.append(enc + 1)
        key_len = KEY_LEN[self.cipher[slot]]
        if key is None:
            self.b.append(0)
        elif key == "A":
            self.b.append(2)
        elif key == "B":
            self.b.append(3)
        elif isinstance(key, tuple):
            self.b.append(7)
            self.b += key[1][:key_len // 2]
        else:
            assert len(key) == key_len
            self.b.append(5)
            self.b += key
        self.b.append(1 if iv is not None else 0)
        if api in (CIPHER_INIT_EX2, ENCRYPT_INIT_EX2, DECRYPT_INIT_EX2):
            if param is None:
                self.b.append(1)
            else:
                self.b.append(0)
                self.b.append(1)  # natural shape
                self._param(*param, for_set=True)
        if iv is not None:
            self.b += iv

    def _length(self, n):
        if n < 64:
            self.b.append(n)
        elif n % 16 == 0 and n < 512:
            self.b.append(64 + n // 16)
        else:
            assert n < 2048
            self.b.append(112)
            self.b += struct.pack("<H", n)

    def _data(self, slot, data=None, n=None, last=False):
        if last:
            assert self.last_out[slot]
            self.b.append(3)
        else:
            if data is None:
                data = bytes((i * 29 + 11) & 0xff for i in range(n))
            self.b.append(0)
            self._length(len(data))
            self.b += data

    def update(self, slot, data=None, n=None, last=False, call=CIPHER_UPDATE,
               shape=OUT_OF_PLACE):
        self._op(OP_UPDATE, slot)
        self.b += bytes([call, shape])
        self._data(slot, data, n, last)
        if shape != AAD:
            self.last_out[slot] = True

    def cipher_call(self, slot, data=None, n=None, last=False,
                    shape=OUT_OF_PLACE):
        self._op(OP_CIPHER, slot)
        self.b.append(shape)
        self._data(slot, data, n, last)
        if shape in (OUT_OF_PLACE, IN_PLACE):
            self.last_out[slot] = True

    def final(self, slot, api=0):
        self._op(OP_FINAL, slot)
        self.b.append(api)

    # The natural size of the keys that are not numbers (NaturalShape).
    SIZES = {"tag": 16, "tlsaad": 13, "tlsivfixed": 4, "tlsivgen": 8,
             "tlsivinv": 8, "tls-mac": 20, "iv": 16, "updated-iv": 16,
             "cts_mode": 3, "xts_standard": 3}

    def _param(self, key, value, for_set):
        self.b.append(PARAM_KEYS.index(key))
        integer = key not in self.SIZES
        if key == "tlsivfixed" and for_set:
            if value is None:  # the whole IV (-1): 128 bytes follow
                self.b.append(0)
                self.b += bytes(range(128))
                return
            self.b.append(1)
        if integer:
            self.b.append(VALUES.index(value))
        else:
            value = bytes(self.SIZES[key]) if value is None else value
            assert len(value) == self.SIZES[key], key
            self.b += value

    def set_param(self, slot, key, value):
        self._op(OP_SET1, slot)
        self.b.append(1)  # natural shape
        self._param(key, value, for_set=True)

    def get_params(self, slot, *keys):
        self._op(OP_GET, slot)
        self.b.append(len(keys) - 1)
        for key in keys:
            self.b.append(1)
            self._param(key, None if key in self.SIZES else 0, for_set=False)

    def set_padding(self, slot, pad):
        self._op(OP_PADDING, slot)
        self.b.append(0 if pad else 1)

    def set_num(self, slot, num):
        self._op(OP_NUM, slot)
        self.b += bytes([1, num])

    def copy(self, src, dst):
        self._op(OP_COPY, src)
        self.b.append(dst)
        self.cipher[dst] = self.cipher[src]
        self.last_out[dst] = self.last_out[src]

    def async_updates(self, *lengths):
        """One update per context in ASYNC jobs: `lengths` in slot order, one
        for each context that takes part (a cipher, not GCM, no TLS)."""
        self._op(OP_RESET, 0)
        self.b.append(0)
        for n in lengths:
            self._data(0, n=n)

    def free(self, slot):
        self._op(OP_FREE, slot)
        self.cipher[slot] = None


IV16 = bytes(range(16))
IV12 = bytes(range(100, 112))


def round_trip(name, config="auto", lengths=(37, 64, 5)):
    """Encrypt in pieces, final, then decrypt the last output in place."""
    s = Seed(config)
    iv = IV12 if "GCM" in name else IV16
    s.init(0, name, key="A", iv=iv, enc=1)
    for n in lengths:
        s.update(0, n=n)
    s.final(0)
    s.get_params(0, "tag") if "GCM" in name else None
    s.init(0, None, key="A", iv=iv, enc=0)
    s.update(0, last=True, shape=IN_PLACE)
    s.final(0)
    return s


def seeds():
    out = {}
    for name in CIPHERS:
        out["mode-" + name.lower()] = round_trip(name)
    for config in CONFIGS:
        out["config-" + config + "-cbc"] = round_trip("AES-128-CBC", config)
        out["config-" + config + "-gcm"] = round_trip("AES-256-GCM", config)
    # Lengths at and around each family's threshold (configuration
    # "thresholds": ecb 32, cbc 48, ctr 20, xts 40, gcm 64; cbc mb 80).
    for name, t in (("AES-128-ECB", 32), ("AES-128-CBC", 48),
                    ("AES-128-CTR", 20), ("AES-128-XTS", 40),
                    ("AES-128-GCM", 64)):
        out["thresholds-" + name.lower()] = round_trip(
            name, "thresholds", (t, t + 1, t - 1 if "XTS" in name else 16))

    # Re-init in the middle of a message (the GCM keystream reuse), with
    # the same key, another key, only an IV, and a direction switch.
    for name in ("AES-128-GCM", "AES-128-CBC", "AES-128-CTR", "AES-128-XTS"):
        iv = IV12 if "GCM" in name else IV16
        for style, kw in (("same-key", {"key": "A"}), ("other-key", {"key": "B"}),
                          ("iv", {"iv": iv}), ("direction", {"enc": 0})):
            s = Seed()
            s.init(0, name, key="A", iv=iv, enc=1)
            s.update(0, n=37)
            args = dict(enc=-1)
            args.update(kw)
            s.init(0, None, **args)
            s.update(0, n=37)
            s.final(0)
            out["reinit-%s-%s" % (style, name.lower())] = s

    # GCM: a wrong tag, then more data and a switch to encrypting.
    s = Seed()
    s.init(0, "AES-128-GCM", key="A", iv=IV12, enc=0)
    s.set_param(0, "tag", bytes(16))
    s.update(0, n=20)
    s.final(0)
    s.update(0, n=20)
    s.init(0, None, enc=1)
    s.final(0)
    s.get_params(0, "tag")
    out["gcm-final-after-wrong-tag"] = s

    # GCM without an IV (random), AAD, tlsivgen/tlsivfixed as OpenSSH.
    s = Seed()
    s.init(0, "AES-128-GCM", key="A", enc=1)
    s.update(0, n=13, shape=AAD)
    s.update(0, n=40)
    s.final(0)
    out["gcm-random-iv"] = s
    s = Seed()
    s.init(0, "AES-256-GCM", api=CIPHER_INIT_EX, key="A", enc=1)
    s.set_param(0, "tlsivfixed", None)
    s.get_params(0, "tlsivgen")
    s.cipher_call(0, n=4, shape=AAD)
    s.cipher_call(0, n=64)
    s.cipher_call(0, n=0, shape=NO_INPUT)
    s.get_params(0, "tag")
    out["gcm-openssh-packet"] = s

    # TLS 1.2 GCM record, in place: fixed IV, AAD, record.
    for enc in (1, 0):
        s = Seed()
        s.init(0, "AES-128-GCM", key="A", enc=enc)
        s.set_param(0, "tlsivfixed", bytes([1, 2, 3, 4]))
        header = bytes([23, 3, 3, 0, 8 + 32 + (0 if enc else 16)])
        s.set_param(0, "tlsaad", bytes(8) + header)
        s.update(0, n=8 + 32 + 16, shape=IN_PLACE)
        out["tls12-gcm-record-%s" % ("encrypt" if enc else "decrypt")] = s

    # TLS CBC records (encrypt-then-MAC and MAC-then-encrypt), then
    # tls-mac, also after raising tls-mac-size (defect 7).
    for version in (0x0301, 0x0303):
        for mac in (0, 20):
            s = Seed()
            s.init(0, "AES-128-CBC", key="A", iv=IV16, enc=1)
            s.set_param(0, "tls-version", version)
            s.set_param(0, "tls-mac-size", mac)
            s.update(0, n=16 + 33 + mac, shape=IN_PLACE)
            s.init(0, None, key="A", iv=IV16, enc=0)
            s.update(0, last=True, shape=IN_PLACE)
            s.get_params(0, "tls-mac")
            s.set_param(0, "tls-mac-size", 65)
            s.get_params(0, "tls-mac")
            out["tls-cbc-%04x-mac%d" % (version, mac)] = s

    # CTR: TLS mode leaves the MAC out (defect 10); num (defect 9).
    s = Seed()
    s.init(0, "AES-128-CTR", key="A", iv=IV16, enc=0)
    s.set_param(0, "tls-version", 0x0303)
    s.set_param(0, "tls-mac-size", 20)
    s.update(0, n=50)
    s.get_params(0, "tls-mac")
    s.update(0, n=5)
    out["ctr-tls-mac"] = s
    s = Seed()
    s.init(0, "AES-128-CTR", key="A", iv=IV16, enc=1)
    s.update(0, n=20)
    s.set_num(0, 5)
    s.update(0, n=30)
    s.set_num(0, 16)
    out["ctr-num"] = s

    # dupctx in the middle of each mode, both copies go on.
    for name in ("AES-256-CBC", "AES-192-CTR", "AES-128-GCM", "AES-256-XTS",
                 "AES-128-ECB"):
        s = Seed()
        iv = IV12 if "GCM" in name else IV16
        s.init(0, name, key="A", iv=iv, enc=1)
        s.update(0, n=21)
        s.copy(0, 1)
        s.update(0, n=40)
        s.update(1, n=40)
        s.final(0)
        s.final(1)
        out["dup-" + name.lower()] = s

    # EVP_Cipher on every mode, with a partial CBC block.
    for name in ("AES-128-ECB", "AES-128-CBC", "AES-128-CTR", "AES-128-XTS"):
        s = Seed()
        s.init(0, name, key="A", iv=IV16, enc=1)
        s.cipher_call(0, n=48)
        s.init(0, None, key="A", iv=IV16, enc=0)
        s.cipher_call(0, last=True)
        s.cipher_call(0, n=20)
        out["evp-cipher-" + name.lower()] = s

    # XTS: equal key halves (refused when encrypting), data units.
    s = Seed()
    s.init(0, "AES-128-XTS", key=("dup", bytes(range(16))), iv=IV16, enc=1)
    s.init(0, None, key=("dup", bytes(range(16))), iv=IV16, enc=0)
    s.update(0, n=15)
    s.update(0, n=17)
    out["xts-duplicate-halves"] = s

    # Multi-buffer batching: CBC encryptions in ASYNC jobs, below and above
    # mb_max_len of the "thresholds" configuration (80).
    for config in ("auto", "thresholds", "mb_off"):
        s = Seed(config)
        for slot in range(4):
            s.init(slot, ("AES-128-CBC", "AES-256-CBC")[slot % 2], key="A",
                   iv=IV16, enc=1)
        s.async_updates(80, 81, 64, 1024)
        s.async_updates(32, 16, 160, 48)
        for slot in range(4):
            s.final(slot)
        out["async-cbc-" + config] = s

    # Padding off and on, held blocks, in place.
    s = Seed()
    s.init(0, "AES-192-CBC", key="B", iv=IV16, enc=0)
    s.set_padding(0, False)
    s.update(0, n=8)
    s.update(0, n=8)
    s.final(0)
    s.set_padding(0, True)
    s.update(0, n=32, shape=IN_PLACE)
    s.final(0)
    out["cbc-padding"] = s
    return out


class ParamsSeed(Seed):
    """The parameter fuzzer's encoding: other opcodes (Harness::RunParamsOp),
    arrays of up to 8 parameters, each with a shape byte and a null byte."""
    P_INIT, P_UPDATE, P_SET, P_GET, P_ALGORITHM = 0, 3, 7, 11, 14

    def init(self, slot, cipher=None, **kw):
        start = len(self.b)
        Seed.init(self, slot, cipher, **kw)
        self.b[start] = self.P_INIT

    def update(self, slot, n):
        self.b += bytes([self.P_UPDATE, slot, CIPHER_UPDATE, OUT_OF_PLACE])
        self._data(slot, n=n)

    def _array(self, op, slot, params, for_set):
        self.b += bytes([op, slot, len(params) - 1])
        for key, value in params:
            self.b.append(PARAM_KEYS.index(key))
            self.b.append(0)  # the key's natural type and size
            if key == "tlsivfixed" and for_set:
                self.b.append(1)
            if key in self.SIZES:
                self.b += value if value is not None else bytes(self.SIZES[key])
            else:
                self.b.append(VALUES.index(value))
            self.b.append(1)  # data not null

    def set_params(self, slot, *params):
        self._array(self.P_SET, slot, params, True)

    def get_params(self, slot, *keys):
        self._array(self.P_GET, slot,
                    [(k, None if k in self.SIZES else 0) for k in keys], False)

    def algorithm(self, cipher, *keys):
        self.b += bytes([self.P_ALGORITHM, 0, CIPHERS.index(cipher),
                         len(keys) - 1])
        for key in keys:
            self.b += bytes([0])  # natural (Bit() false: not natural only)
            self.b.append(PARAM_KEYS.index(key))
            self.b.append(0)
            if key in self.SIZES:
                self.b += bytes(self.SIZES[key])
            else:
                self.b.append(0)
            self.b.append(1)
            self.b.append(0)  # keep the drawn key


def params_seeds():
    out = {}
    for name in CIPHERS:
        s = ParamsSeed()
        iv = IV12 if "GCM" in name else IV16
        s.init(0, name, key="A", iv=iv, enc=0 if "GCM" in name else 1)
        s.update(0, 40)
        if "GCM" in name:
            s.set_params(0, ("tag", bytes(16)), ("ivlen", 16),
                         ("tlsaad", bytes(11) + bytes([0, 40])),
                         ("tlsivfixed", bytes(4)), ("tlsivinv", bytes(8)))
            s.get_params(0, "iv", "updated-iv", "taglen", "tlsaadpad",
                         "tlsivgen", "tag", "ivlen", "keylen")
        else:
            s.set_params(0, ("padding", 0), ("use-bits", 1),
                         ("tls-version", 0x0303), ("tls-mac-size", 20),
                         ("num", 5), ("keylen", 16))
            s.get_params(0, "iv", "updated-iv", "num", "padding", "tls-mac",
                         "keylen", "ivlen", "taglen")
        s.algorithm(name, "mode", "keylen", "ivlen", "blocksize", "aead",
                    "custom-iv")
        out["params-" + name.lower()] = s
    return out


# engine_fuzzer.cc's input: algorithm (core::kAlgs order), flags (bit 0
# encrypt, bit 1 padding), for GCM the IV length less one, the key, 64
# bytes of IV, then operations (a byte each, with their bytes).
ENGINE_KEY_LENS = [16, 24, 32] * 3 + [32, 64] + [16, 24, 32]


def engine_seeds():
    out = {}
    for alg, key_len in enumerate(ENGINE_KEY_LENS):
        gcm = alg >= 11
        for flags in (1, 2, 3):
            b = [alg, flags]
            if gcm:
                b.append(11)  # a 12-byte IV
            b += [(i * 29 + alg) & 0xFF for i in range(key_len)]
            b += [(i * 7 + 1) & 0xFF for i in range(64)]
            if gcm:
                b += [6, 13] + [0x41] * 13  # AAD
            else:
                b += [6, 3] + [0x42] * 64  # CTR: num 3; else 64 bytes
            b += [0, 37, 0] + [0x50] * 37  # update of 37 bytes
            b += [5]  # copy
            b += [1, 100, 0] + [0x51] * 100  # update of 100 bytes
            b += [7]  # state
            b += [2] + [0x54] * 16  # final (a tag to check)
            b += [3] + [0x49] * 64  # a new IV
            b += [0, 16, 0] + [0x52] * 16
            b += [4] + [0x4b] * key_len + [0x4a] * (64 if gcm else 0)
            b += [0, 20, 0] + [0x53] * 20
            b += [2] + [0x55] * 16
            name = "engine-%02d-%s" % (alg, {1: "encrypt", 2: "decrypt-padded",
                                             3: "encrypt-padded"}[flags])
            out[name] = b
    return out


def write(corpus, seed_map):
    os.makedirs(corpus, exist_ok=True)
    for name, seed in sorted(seed_map.items()):
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(bytes(seed if isinstance(seed, list) else seed.b))


def main():
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    write(os.path.join(corpus, "sequence"), seeds())
    write(os.path.join(corpus, "params"), params_seeds())
    write(os.path.join(corpus, "engine"), engine_seeds())


if __name__ == "__main__":
    main()
