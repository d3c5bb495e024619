// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// GHASH and AES-GCM. The test builds complete GCM (NIST SP 800-38D) out of
// the tier's primitives (J0 for any IV length, AAD through ghash, whole blocks
// through gcm_encrypt/gcm_decrypt, the partial last block and the length
// block on the test side) and compares ciphertext and tag with OpenSSL's
// AES-GCM; every such case also goes through SimdGcm's one-call Seal and
// Open. GHASH is also checked against a bit-serial software model.
#include <cstring>

#include "kernels/simd_gcm.h"
#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

using Block = std::array<uint8_t, 16>;

// SP 800-38D Algorithm 1: X * Y in GF(2^128), bit-serial.
Block ModelGfMul(const Block &x, const Block &y) {
  Block z{}, v = y;
  for (int i = 0; i < 128; ++i) {
    if (x[i / 8] >> (7 - i % 8) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool lsb = v[15] & 1;
    for (int j = 15; j > 0; --j)
      v[j] = static_cast<uint8_t>(v[j] >> 1 | v[j - 1] << 7);
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  return z;
}

Block ModelGhash(const Block &h, Block xi, std::span<const uint8_t> data) {
  for (size_t off = 0; off + 16 <= data.size(); off += 16) {
    for (int j = 0; j < 16; ++j) xi[j] ^= data[off + j];
    xi = ModelGfMul(xi, h);
  }
  return xi;
}

Block ToBlock(std::span<const uint8_t> bytes) {
  Block b{};
  std::memcpy(b.data(), bytes.data(), std::min<size_t>(16, bytes.size()));
  return b;
}

void PutBe64(uint8_t *out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}

// GCM from the tier's primitives.
class GcmBuilder {
 public:
  GcmBuilder(const TierOps &ops, std::span<const uint8_t> key) : ops_(ops) {
    ops_.expand_key(&enc_, key.data(), key.size());
    ops_.gcm_init(&gkey_, &enc_);
  }
  const aesmux_aes_key &enc() const { return enc_; }
  aesmux_gcm_key &gkey() const { return gkey_; }

  // Folds `data` into xi, zero-padding a partial last block.
  void GhashPadded(Block &xi, std::span<const uint8_t> data) const {
    const size_t whole = data.size() & ~size_t{15};
    ops_.ghash(&gkey_, xi.data(), data.data(), whole);
    if (whole != data.size()) {
      const Block last = ToBlock(data.subspan(whole));
      ops_.ghash(&gkey_, xi.data(), last.data(), 16);
    }
  }

  Block J0(std::span<const uint8_t> iv) const {
    Block j0{};
    if (iv.size() == 12) {
      std::memcpy(j0.data(), iv.data(), 12);
      j0[15] = 1;
      return j0;
    }
    GhashPadded(j0, iv);
    Block lengths{};
    PutBe64(&lengths[8], uint64_t{iv.size()} * 8);
    ops_.ghash(&gkey_, j0.data(), lengths.data(), 16);
    return j0;
  }

  static void Inc32(Block &ctr) {
    for (int i = 15; i >= 12; --i) {
      if (++ctr[i] != 0) break;
    }
  }

  // Encrypts (or decrypts) `in` into `out` and returns the tag. The whole
  // blocks go through one gcm_encrypt/gcm_decrypt call on the given
  // buffers; the partial last block is done here.
  Block Run(bool encrypt, std::span<const uint8_t> iv,
            std::span<const uint8_t> aad, const uint8_t *in, uint8_t *out,
            size_t len) const {
    const Block j0 = J0(iv);
    Block ctr = j0;
    Inc32(ctr);
    Block xi{};
    GhashPadded(xi, aad);
    const size_t whole = len & ~size_t{15};
    (encrypt ? ops_.gcm_encrypt : ops_.gcm_decrypt)(&enc_, &gkey_, ctr.data(),
                                                    xi.data(), out, in, whole);
    if (whole != len) {
      Block keystream;
      ops_.ecb_encrypt(&enc_, keystream.data(), ctr.data(), 16);
      Block ciphertext{};
      for (size_t i = 0; i < len - whole; ++i) {
        const uint8_t c =
            encrypt ? in[whole + i] ^ keystream[i] : in[whole + i];
        out[whole + i] = in[whole + i] ^ keystream[i];
        ciphertext[i] = c;
      }
      ops_.ghash(&gkey_, xi.data(), ciphertext.data(), 16);
    }
    Block lengths;
    PutBe64(&lengths[0], uint64_t{aad.size()} * 8);
    PutBe64(&lengths[8], uint64_t{len} * 8);
    ops_.ghash(&gkey_, xi.data(), lengths.data(), 16);
    Block ek_j0;
    ops_.ecb_encrypt(&enc_, ek_j0.data(), j0.data(), 16);
    for (int i = 0; i < 16; ++i) xi[i] ^= ek_j0[i];
    return xi;
  }

 private:
  const TierOps &ops_;
  aesmux_aes_key enc_{};
  // The kernels may complete the table of powers on first use.
  mutable aesmux_gcm_key gkey_{};
};

class GcmTest : public TierTest {
 protected:
  void Check(std::span<const uint8_t> key, std::span<const uint8_t> iv,
             std::span<const uint8_t> aad, std::span<const uint8_t> plaintext,
             const Placement &placement) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << key.size() << " iv_len=" << iv.size()
                 << " aad_len=" << aad.size() << " len=" << plaintext.size()
                 << " " << placement);
    const Reference::GcmResult expected =
        Reference::Get().GcmEncrypt(key, iv, aad, plaintext);
    GcmBuilder gcm(ops(), key);

    CallBuffers encrypt(plaintext, placement);
    const Block tag =
        gcm.Run(true, iv, aad, encrypt.in(), encrypt.out(), plaintext.size());
    ASSERT_TRUE(SameBytes(encrypt.output(), expected.ciphertext));
    ASSERT_EQ(Hex(tag), Hex(expected.tag));
    ASSERT_TRUE(encrypt.GuardsIntact());

    CallBuffers decrypt(expected.ciphertext, placement);
    const Block back_tag =
        gcm.Run(false, iv, aad, decrypt.in(), decrypt.out(), plaintext.size());
    ASSERT_TRUE(SameBytes(decrypt.output(), plaintext));
    ASSERT_EQ(Hex(back_tag), Hex(expected.tag));
    ASSERT_TRUE(decrypt.GuardsIntact());

    // The same message whole through SimdGcm: Seal, then Open with the
    // right tag and with its last byte changed.
    SimdGcm one_call;
    ASSERT_TRUE(one_call.SetKey(GetParam(), key));
    CallBuffers seal(plaintext, placement);
    uint8_t seal_tag[16];
    ASSERT_EQ(one_call.Seal(iv, aad, seal.out(), seal.in(), plaintext.size(),
                            seal_tag),
              SimdGcm::Status::kOk);
    ASSERT_TRUE(SameBytes(seal.output(), expected.ciphertext));
    ASSERT_EQ(Hex(std::span<const uint8_t>(seal_tag, 16)), Hex(expected.tag));
    ASSERT_TRUE(seal.GuardsIntact());
    for (const bool forged : {false, true}) {
      CallBuffers open(expected.ciphertext, placement);
      Block given = expected.tag;
      if (forged) given[15] ^= 1;
      ASSERT_EQ(one_call.Open(iv, aad, open.out(), open.in(),
                              plaintext.size(), given.data()),
                forged ? SimdGcm::Status::kBadTag : SimdGcm::Status::kOk);
      ASSERT_TRUE(SameBytes(open.output(), plaintext));
      ASSERT_TRUE(open.GuardsIntact());
    }
  }

  void CheckRandom(size_t key_len, size_t iv_len, size_t aad_len, size_t len,
                   const Placement &placement) {
    Check(rng_.RandomBytes(key_len), rng_.RandomBytes(iv_len),
          rng_.RandomBytes(aad_len), rng_.RandomBytes(len), placement);
  }
};

TEST_P(GcmTest, RandomMessagesMatchOpenSsl) {
  ForRandomPlacements(rng_, 200, [&](size_t key_len, const Placement &p) {
    const size_t iv_len = rng_.Coin() ? 12 : rng_.Uniform(1, 128);
    const size_t aad_len = rng_.Uniform(0, rng_.Coin() ? 40 : 1000);
    CheckRandom(key_len, iv_len, aad_len, rng_.MessageLength(), p);
  });
}

// Every whole-block count through the stitched loops and their final runs,
// with and without a partial last block: past three groups of the widest
// loop (32 blocks on AVX-512, 16 on AVX2), so every way of splitting a
// message into groups of four and eight vectors and a run of 4-, 2- and
// 1-vector steps and a partial vector is taken, in both directions.
TEST_P(GcmTest, EveryBlockCountUpTo140) {
  for (size_t key_len : kKeySizes) {
    for (size_t blocks = 0; blocks <= 140; ++blocks) {
      for (size_t extra : {size_t{0}, size_t{5}}) {
        CheckRandom(key_len, 12, blocks, 16 * blocks + extra,
                    Placement{0, 0, blocks % 2 == 1});
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every byte length up to 600 (a partial last block at every position,
// every short run), with TLS's 13 bytes of AAD, alternately in place and
// out of place at odd offsets.
TEST_P(GcmTest, EveryLengthUpTo600Bytes) {
  for (size_t key_len : {size_t{16}, size_t{32}}) {
    for (size_t len = 0; len <= 600; ++len) {
      const Placement placement =
          len % 2 ? Placement{0, 0, true} : Placement{len % 7, len % 5, false};
      CheckRandom(key_len, 12, 13, len, placement);
      if (HasFatalFailure()) return;
    }
  }
}

// Long messages (the stitched loops for many groups, both group widths on
// AVX-512) at and around record and page sizes.
TEST_P(GcmTest, LongMessages) {
  const size_t lengths[] = {1024, 1344, 2047, 2048, 4096 + 48, 8192, 16383,
                            16384, 16384 + 16 * 37 + 9, 65536 + 3};
  for (size_t key_len : kKeySizes) {
    for (size_t len : lengths) {
      CheckRandom(key_len, 12, 13, len, Placement{0, 0, rng_.Coin()});
      CheckRandom(key_len, 12, 13, len,
                  Placement{rng_.Uniform(1, 15), rng_.Uniform(1, 15), false});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(GcmTest, EveryIvLength1To128) {
  for (size_t key_len : kKeySizes) {
    for (size_t iv_len = 1; iv_len <= 128; ++iv_len) {
      CheckRandom(key_len, iv_len, rng_.Uniform(0, 64), rng_.Uniform(0, 300),
                  Placement{});
      if (HasFatalFailure()) return;
    }
  }
}

// Long AAD (many GHASH groups and every kind of tail) with IV lengths that
// are not 12 (J0 through GHASH, odd lengths, partial IV blocks).
TEST_P(GcmTest, LongAadAndOddIvLengths) {
  const size_t aad_lengths[] = {4095, 4096 + 17, 16385, 65536 + 15, 100003};
  const size_t iv_lengths[] = {1, 7, 13, 17, 31, 33, 63, 127};
  for (size_t key_len : kKeySizes) {
    for (size_t aad_len : aad_lengths) {
      for (size_t iv_len : iv_lengths) {
        CheckRandom(key_len, iv_len, aad_len, rng_.Uniform(0, 1000),
                    Placement{rng_.Uniform(0, 15), rng_.Uniform(0, 15),
                              rng_.Coin()});
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(GcmTest, EveryMisalignment) {
  ForEveryMisalignment([&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, 12, 20, rng_.Uniform(1, 700), p);
  });
}

// GHASH against the bit-serial model, from a random accumulator, for every
// block count up to 40 and some long inputs.
TEST_P(GcmTest, GhashMatchesModel) {
  for (size_t key_len : kKeySizes) {
    GcmBuilder gcm(ops(), rng_.RandomBytes(key_len));
    Block h{};
    ops().ecb_encrypt(&gcm.enc(), h.data(), h.data(), 16);
    std::vector<size_t> block_counts;
    for (size_t n = 0; n <= 40; ++n) block_counts.push_back(n);
    for (size_t n : {257, 1000, 4097}) block_counts.push_back(n);
    for (size_t blocks : block_counts) {
      const Bytes data = rng_.RandomBytes(16 * blocks);
      Block xi = ToBlock(rng_.RandomBytes(16));
      const Block expected = ModelGhash(h, xi, data);
      GuardedBuffer in(data, blocks % 16);
      ops().ghash(&gcm.gkey(), xi.data(), in.data(), data.size());
      ASSERT_EQ(Hex(xi), Hex(expected))
          << "key_len=" << key_len << " blocks=" << blocks;
    }
  }
}

// Splitting GHASH input into two calls at any block boundary gives the same
// accumulator as one call.
TEST_P(GcmTest, GhashTwoCallsEqualOne) {
  for (size_t key_len : kKeySizes) {
    GcmBuilder gcm(ops(), rng_.RandomBytes(key_len));
    for (int i = 0; i < 100; ++i) {
      const size_t blocks = rng_.Uniform(0, 100);
      const Bytes data = rng_.RandomBytes(16 * blocks);
      const size_t split = 16 * rng_.Uniform(0, blocks);
      const Block start = ToBlock(rng_.RandomBytes(16));
      Block one = start, two = start;
      ops().ghash(&gcm.gkey(), one.data(), data.data(), data.size());
      ops().ghash(&gcm.gkey(), two.data(), data.data(), split);
      ops().ghash(&gcm.gkey(), two.data(), data.data() + split,
                  data.size() - split);
      ASSERT_EQ(Hex(one), Hex(two))
          << "blocks=" << blocks << " split=" << split;
    }
  }
}

// A message cut into random whole-block chunks (each call continuing from
// the counter and accumulator the previous one wrote back) equals one call,
// in both directions.
TEST_P(GcmTest, ChunkedStreamsMatchOneShot) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 60; ++i) {
      GcmBuilder gcm(ops(), rng_.RandomBytes(key_len));
      const Bytes input =
          rng_.RandomBytes(16 * rng_.Uniform(0, rng_.Coin() ? 64 : 1024));
      const Block ctr0 = ToBlock(rng_.RandomBytes(16));
      const Block xi0 = ToBlock(rng_.RandomBytes(16));
      for (bool encrypt : {true, false}) {
        auto kernel = encrypt ? ops().gcm_encrypt : ops().gcm_decrypt;
        Bytes one_out(input.size()), chunk_out(input.size());
        Block one_ctr = ctr0, one_xi = xi0, ctr = ctr0, xi = xi0;
        kernel(&gcm.enc(), &gcm.gkey(), one_ctr.data(), one_xi.data(),
               one_out.data(), input.data(), input.size());
        for (size_t offset = 0; offset < input.size();) {
          const size_t len =
              std::min(16 * rng_.Uniform(0, 20), input.size() - offset);
          kernel(&gcm.enc(), &gcm.gkey(), ctr.data(), xi.data(),
                 chunk_out.data() + offset, input.data() + offset, len);
          offset += len;
        }
        ASSERT_TRUE(SameBytes(chunk_out, one_out));
        ASSERT_EQ(Hex(ctr), Hex(one_ctr));
        ASSERT_EQ(Hex(xi), Hex(one_xi));
      }
    }
  }
}

// The counter is the last 32 bits, incremented modulo 2^32 without carrying
// into the other 96 bits. Checked against OpenSSL's ECB keystream and the
// GHASH model, with the wrap at every position of the 8-block loop.
TEST_P(GcmTest, CounterWrapsModulo2To32) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    GcmBuilder gcm(ops(), key);
    Block h{};
    ops().ecb_encrypt(&gcm.enc(), h.data(), h.data(), 16);
    for (unsigned below_wrap = 1; below_wrap <= 17; ++below_wrap) {
      const size_t blocks = 40;
      Block ctr0 = ToBlock(rng_.RandomBytes(16));
      const uint32_t start = 0u - below_wrap;
      for (int i = 0; i < 4; ++i)
        ctr0[12 + i] = static_cast<uint8_t>(start >> (24 - 8 * i));
      const Bytes input = rng_.RandomBytes(16 * blocks);
      Bytes counters;
      Block c = ctr0;
      for (size_t b = 0; b < blocks; ++b, GcmBuilder::Inc32(c)) {
        counters.insert(counters.end(), c.begin(), c.end());
      }
      const Bytes keystream = Reference::Get().Crypt(CipherName(key_len, "ECB"),
                                                     true, key, {}, counters);
      Bytes expected_out(input.size());
      for (size_t i = 0; i < input.size(); ++i)
        expected_out[i] = input[i] ^ keystream[i];

      for (bool encrypt : {true, false}) {
        Block ctr = ctr0, xi{};
        Bytes out(input.size());
        (encrypt ? ops().gcm_encrypt : ops().gcm_decrypt)(
            &gcm.enc(), &gcm.gkey(), ctr.data(), xi.data(), out.data(),
            input.data(), input.size());
        ASSERT_TRUE(SameBytes(out, expected_out))
            << "below_wrap=" << below_wrap;
        ASSERT_EQ(Hex(ctr), Hex(c)) << "counter written back";
        const Block expected_xi =
            ModelGhash(h, Block{},
                       encrypt ? std::span<const uint8_t>(out)
                               : std::span<const uint8_t>(input));
        ASSERT_EQ(Hex(xi), Hex(expected_xi));
      }
    }
  }
}

// The VAES tiers increment counter blocks with byte additions while the
// counter's low byte cannot carry within a step, and byte-reverse them
// otherwise. Starting at every value of that low byte, 200 blocks (several
// groups on every tier, groups starting at every low byte mod 32, and a
// final run) and messages shorter than a group (runs of 4-, 2-, 1- and
// partial-vector steps only) must give OpenSSL's keystream; the carry into
// the next byte is also checked at a random 32-bit counter.
TEST_P(GcmTest, CounterLowByteAtEveryValue) {
  const size_t key_len = 16;
  const Bytes key = rng_.RandomBytes(key_len);
  GcmBuilder gcm(ops(), key);
  for (size_t blocks : {200, 31, 13, 6, 3}) {
    SCOPED_TRACE(::testing::Message() << "blocks=" << blocks);
    const Bytes input = rng_.RandomBytes(16 * blocks);
    for (unsigned low = 0; low < 256; ++low) {
      Block ctr0 = ToBlock(rng_.RandomBytes(16));
      ctr0[15] = static_cast<uint8_t>(low);
      Bytes counters;
      Block c = ctr0;
      for (size_t b = 0; b < blocks; ++b, GcmBuilder::Inc32(c)) {
        counters.insert(counters.end(), c.begin(), c.end());
      }
      const Bytes keystream = Reference::Get().Crypt(CipherName(key_len, "ECB"),
                                                     true, key, {}, counters);
      for (bool encrypt : {true, false}) {
        Block ctr = ctr0, xi{};
        Bytes out(input.size());
        (encrypt ? ops().gcm_encrypt : ops().gcm_decrypt)(
            &gcm.enc(), &gcm.gkey(), ctr.data(), xi.data(), out.data(),
            input.data(), input.size());
        for (size_t i = 0; i < input.size(); ++i) {
          ASSERT_EQ(out[i], input[i] ^ keystream[i])
              << "low byte " << low << ", block " << i / 16;
        }
        ASSERT_EQ(Hex(ctr), Hex(c)) << "counter written back";
      }
    }
  }
}

// SP 800-38D test case 4 from the GCM specification (McGrew & Viega), as
// carried in OpenSSL 3.0's evpciph_aes_common.txt: AES-128, 60-byte message,
// 20-byte AAD.
TEST_P(GcmTest, GcmSpecTestCase4) {
  const Bytes key = FromHex("feffe9928665731c6d6a8f9467308308");
  const Bytes iv = FromHex("cafebabefacedbaddecaf888");
  const Bytes aad = FromHex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
  const Bytes plaintext = FromHex(
      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95"
      "956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
  const Bytes ciphertext = FromHex(
      "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b2"
      "5466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091");
  const char *tag = "5bc94fbc3221a5db94fae95ae7121a47";
  GcmBuilder gcm(ops(), key);
  Bytes out(plaintext.size());
  EXPECT_EQ(
      Hex(gcm.Run(true, iv, aad, plaintext.data(), out.data(), out.size())),
      tag);
  EXPECT_EQ(Hex(out), Hex(ciphertext));
  EXPECT_EQ(
      Hex(gcm.Run(false, iv, aad, ciphertext.data(), out.data(), out.size())),
      tag);
  EXPECT_EQ(Hex(out), Hex(plaintext));
}

// SimdGcm, the glue around the kernels, fed AAD and payload in pieces of
// every length below a block and above (short AAD is copied without a
// call, the last partial block and the lengths are hashed in one call):
// its tag is OpenSSL's, and Verify accepts the tag's first 1..16 bytes and
// refuses each of them with any one byte changed.
TEST_P(GcmTest, SimdGcmTagsAndVerifiesLikeOpenSsl) {
  for (size_t aad_len : {size_t{0}, size_t{1}, size_t{7}, size_t{13},
                         size_t{16}, size_t{29}}) {
    for (size_t len : {size_t{0}, size_t{3}, size_t{16}, size_t{31}}) {
      SCOPED_TRACE(::testing::Message() << "aad_len=" << aad_len
                                        << " len=" << len);
      const Bytes key = rng_.RandomBytes(16), iv = rng_.RandomBytes(12),
                  aad = rng_.RandomBytes(aad_len),
                  plain = rng_.RandomBytes(len);
      const Reference::GcmResult expected =
          Reference::Get().GcmEncrypt(key, iv, aad, plain);
      SimdGcm gcm;
      ASSERT_TRUE(gcm.SetKey(GetParam(), key));
      gcm.Start(iv);
      // AAD in two pieces, the first shorter than a block.
      const size_t split = std::min<size_t>(aad_len, 5);
      ASSERT_EQ(gcm.Aad({aad.data(), split}), SimdGcm::Status::kOk);
      ASSERT_EQ(gcm.Aad({aad.data() + split, aad_len - split}),
                SimdGcm::Status::kOk);
      Bytes out(len);
      ASSERT_EQ(gcm.Encrypt(out.data(), plain.data(), len),
                SimdGcm::Status::kOk);
      uint8_t tag[16];
      gcm.Finish(tag);
      ASSERT_EQ(Hex(out), Hex(expected.ciphertext));
      ASSERT_EQ(Hex(std::span<const uint8_t>(tag, 16)), Hex(expected.tag));

      gcm.Start(iv);
      ASSERT_EQ(gcm.Aad(aad), SimdGcm::Status::kOk);
      ASSERT_EQ(gcm.Decrypt(out.data(), expected.ciphertext.data(), len),
                SimdGcm::Status::kOk);
      for (size_t tag_len = 1; tag_len <= 16; ++tag_len) {
        uint8_t given[16];
        std::memcpy(given, expected.tag.data(), 16);
        EXPECT_TRUE(gcm.Verify(given, tag_len)) << "tag_len=" << tag_len;
        for (size_t i = 0; i < 16; ++i) {
          given[i] ^= 0x10;
          // Bytes past tag_len are not the caller's: they do not count.
          EXPECT_EQ(gcm.Verify(given, tag_len), i >= tag_len)
              << "tag_len=" << tag_len << " byte " << i;
          given[i] ^= 0x10;
        }
      }
    }
  }
}

// Seal and Open give up a message under way and leave none: after
// Start, AAD and a partial block, a Seal is still the whole message's
// own; a Start after Seal or Open begins a message as on a new object;
// each tag byte changed fails Open.
TEST_P(GcmTest, SealAndOpenStandAlone) {
  const Bytes key = rng_.RandomBytes(32), iv = rng_.RandomBytes(12),
              aad = rng_.RandomBytes(13), plain = rng_.RandomBytes(100);
  const Reference::GcmResult expected =
      Reference::Get().GcmEncrypt(key, iv, aad, plain);
  SimdGcm gcm;
  ASSERT_TRUE(gcm.SetKey(GetParam(), key));
  Bytes out(plain.size());
  uint8_t tag[16];
  gcm.Start(rng_.RandomBytes(12));
  ASSERT_EQ(gcm.Aad(rng_.RandomBytes(5)), SimdGcm::Status::kOk);
  ASSERT_EQ(gcm.Encrypt(out.data(), plain.data(), 7), SimdGcm::Status::kOk);
  ASSERT_EQ(gcm.Seal(iv, aad, out.data(), plain.data(), plain.size(), tag),
            SimdGcm::Status::kOk);
  EXPECT_EQ(Hex(out), Hex(expected.ciphertext));
  EXPECT_EQ(Hex(std::span<const uint8_t>(tag, 16)), Hex(expected.tag));

  // Streaming after the one call.
  gcm.Start(iv);
  ASSERT_EQ(gcm.Aad(aad), SimdGcm::Status::kOk);
  ASSERT_EQ(gcm.Encrypt(out.data(), plain.data(), plain.size()),
            SimdGcm::Status::kOk);
  gcm.Finish(tag);
  EXPECT_EQ(Hex(out), Hex(expected.ciphertext));
  EXPECT_EQ(Hex(std::span<const uint8_t>(tag, 16)), Hex(expected.tag));

  for (size_t i = 0; i < 16; ++i) {
    Block given = expected.tag;
    given[i] ^= 0x80;
    EXPECT_EQ(gcm.Open(iv, aad, out.data(), expected.ciphertext.data(),
                       out.size(), given.data()),
              SimdGcm::Status::kBadTag)
        << "byte " << i;
  }
  gcm.Start(iv);
  ASSERT_EQ(gcm.Aad(aad), SimdGcm::Status::kOk);
  ASSERT_EQ(gcm.Decrypt(out.data(), expected.ciphertext.data(), out.size()),
            SimdGcm::Status::kOk);
  EXPECT_TRUE(gcm.Verify(expected.tag.data(), 16));
  EXPECT_EQ(Hex(out), Hex(plain));
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(GcmTest);

}  // namespace
}  // namespace aesmux::kernels::testing
