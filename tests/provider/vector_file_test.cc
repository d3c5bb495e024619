// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The vector file reader: what it accepts and every way it refuses a file.
#include "tests/provider/vector_file.h"

#include <gtest/gtest.h>

namespace aesmux::test {
namespace {

const VectorFileSpec kSpec = {{"Cipher", "Key", "AAD"}, {"AAD"}};

TEST(VectorFileTest, ReadsStanzasTitlesAndComments) {
  std::string error;
  const auto stanzas = ParseVectorFile(
      "# comment\n"
      "Title = First\n"
      "\n"
      "Cipher = AES-128-ECB\n"
      "Key   =   00ff  \r\n"
      "# a comment inside a stanza does not end it\n"
      "AAD =\n"
      "AAD = 01\n"
      "\n\n"
      "Title = Second\n"
      "\n"
      "Cipher = aes-256-gcm\n",  // the last stanza needs no blank line
      kSpec, &error);
  ASSERT_TRUE(stanzas.has_value()) << error;
  ASSERT_EQ(stanzas->size(), 2u);

  const Stanza &first = (*stanzas)[0];
  EXPECT_EQ(first.line, 4);
  EXPECT_EQ(first.title, "First");
  ASSERT_NE(first.Find("Key"), nullptr);
  EXPECT_EQ(first.Find("Key")->value, "00ff");
  EXPECT_EQ(first.Find("Key")->line, 5);
  const auto aads = first.FindAll("AAD");
  ASSERT_EQ(aads.size(), 2u);
  EXPECT_EQ(aads[0]->value, "");
  EXPECT_EQ(aads[1]->value, "01");
  EXPECT_EQ(first.Find("Tag"), nullptr);

  const Stanza &second = (*stanzas)[1];
  EXPECT_EQ(second.line, 13);
  EXPECT_EQ(second.title, "Second");
  EXPECT_EQ(second.Find("Cipher")->value, "aes-256-gcm");
}

TEST(VectorFileTest, RefusesUnknownAttribute) {
  std::string error;
  EXPECT_FALSE(
      ParseVectorFile("Cipher = x\nRounds = 12\n", kSpec, &error).has_value());
  EXPECT_EQ(error, "line 2: unknown attribute 'Rounds'");
}

TEST(VectorFileTest, RefusesRepeatedAttribute) {
  std::string error;
  EXPECT_FALSE(
      ParseVectorFile("Cipher = x\nKey = 00\nKey = 01\n", kSpec, &error)
          .has_value());
  EXPECT_EQ(error, "line 3: attribute 'Key' repeated");
}

TEST(VectorFileTest, RefusesLineWithoutEquals) {
  std::string error;
  EXPECT_FALSE(
      ParseVectorFile("Cipher = x\nKey 00\n", kSpec, &error).has_value());
  EXPECT_EQ(error, "line 2: expected 'Name = Value', got 'Key 00'");
}

TEST(VectorFileTest, RefusesEmptyName) {
  std::string error;
  EXPECT_FALSE(ParseVectorFile(" = 00\n", kSpec, &error).has_value());
  EXPECT_EQ(error, "line 1: unknown attribute ''");
}

TEST(VectorFileTest, RefusesTitleInsideStanza) {
  std::string error;
  EXPECT_FALSE(
      ParseVectorFile("Cipher = x\nTitle = t\n", kSpec, &error).has_value());
  EXPECT_EQ(error, "line 2: Title must be a stanza of its own");
}

TEST(VectorFileTest, ReadFileNamesThePath) {
  std::string error;
  EXPECT_FALSE(
      ReadVectorFile("/nonexistent/vectors.txt", kSpec, &error).has_value());
  EXPECT_EQ(error, "cannot open /nonexistent/vectors.txt");
}

TEST(VectorFileTest, DecodesHex) {
  EXPECT_EQ(DecodeHex(""), std::vector<uint8_t>{});
  EXPECT_EQ(DecodeHex("00aBfF7e"),
            (std::vector<uint8_t>{0x00, 0xab, 0xff, 0x7e}));
  EXPECT_FALSE(DecodeHex("abc").has_value());
  EXPECT_FALSE(DecodeHex("0g").has_value());
  EXPECT_FALSE(DecodeHex("00 11").has_value());
}

}  // namespace
}  // namespace aesmux::test
