// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A ring's requests (provider/afalg/ring.h) read their result into the
// slot's bounce buffer and copy it to `rx` when they complete: to each
// piece in order (a null piece skipped); a request that fails or reads
// less than `rx` writes nothing there; one whose bounce buffer cannot be
// mapped, or that is longer than one, is refused before anything is sent.
// Runs wherever io_uring does, on a datagram socket connected to itself
// in place of an AF_ALG op socket (it ignores the SOL_ALG cmsgs and reads
// back what was sent).
#include "provider/afalg/ring.h"

#include <gtest/gtest.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "provider/afalg/fault.h"
#include "provider/afalg/fd_budget.h"

namespace aesmux::afalg {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Random(size_t len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes bytes(len);
  for (uint8_t &byte : bytes) byte = static_cast<uint8_t>(rng());
  return bytes;
}

class RingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ConfigureFdBudget(0);
    int error = 0;
    if (Ring::ForThisThread(&error) == nullptr) {
      GTEST_SKIP() << "no io_uring ring here: " << strerror(-error);
    }
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    // Abstract: nothing in the file system.
    const int len =
        std::snprintf(address.sun_path + 1, sizeof(address.sun_path) - 1,
                      "aesmux-ring-test-%d", getpid());
    const auto size =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
    ASSERT_EQ(bind(fd_, reinterpret_cast<sockaddr *>(&address), size), 0);
    ASSERT_EQ(connect(fd_, reinterpret_cast<sockaddr *>(&address), size), 0);
  }
  void TearDown() override {
    ClearFaults();
    if (fd_ >= 0) close(fd_);
  }

  // Sends `in` as one datagram and reads it back into `rx`; the ring's
  // result (the request's is in `request`).
  int Run(Request &request, const Bytes &in, std::vector<iovec> rx) {
    request.op_fd = fd_;
    request.tx[0] = {const_cast<uint8_t *>(in.data()), in.size()};
    for (size_t i = 0; i < rx.size(); ++i) request.rx[i] = rx[i];
    request.rx_count = static_cast<unsigned>(rx.size());
    const uint8_t iv[16] = {};
    PrepareSend(request, ALG_OP_ENCRYPT, iv, sizeof(iv), -1, 1);
    int error = 0;
    Ring *ring = Ring::ForThisThread(&error);
    if (ring == nullptr) return error;
    return ring->RunNow(request);
  }

  // Whether a datagram is waiting on the socket.
  bool Pending() {
    uint8_t byte;
    return recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) >= 0;
  }

  int fd_ = -1;
};

TEST_F(RingTest, TheResultIsCopiedToEachPieceInOrder) {
  const Bytes in = Random(350, 1);
  Bytes first(120, 0xee), second(200, 0xee);
  Request request;
  ASSERT_EQ(Run(request, in,
                {{first.data(), first.size()},
                 {nullptr, 30},
                 {second.data(), second.size()}}),
            0);
  EXPECT_EQ(request.result, 350);
  EXPECT_EQ(first, Bytes(in.begin(), in.begin() + 120));
  EXPECT_EQ(second, Bytes(in.begin() + 150, in.end()));
}

TEST_F(RingTest, AShortResultIsNotCopied) {
  const Bytes in = Random(100, 2);
  Bytes out(300, 0xee);
  Request request;
  ASSERT_EQ(Run(request, in, {{out.data(), out.size()}}), 0);
  EXPECT_EQ(request.result, 100);
  EXPECT_EQ(out, Bytes(300, 0xee));
}

// The biggest request there is, in place: read whole from the bounce
// buffer, after the kernel has copied the input.
TEST_F(RingTest, ALargestRequestInPlace) {
  const Bytes in = Random(BounceBuffers::kBytes, 3);
  Bytes buffer = in;
  Request request;
  ASSERT_EQ(Run(request, buffer, {{buffer.data(), buffer.size()}}), 0);
  EXPECT_EQ(request.result, static_cast<int>(BounceBuffers::kBytes));
  EXPECT_EQ(buffer, in);
}

TEST_F(RingTest, AFailedRequestWritesNothing) {
  const Bytes in = Random(64, 4);
  Bytes out(64, 0xee);
  Request request;
  // A socket connected nowhere: the sendmsg fails (ENOTCONN), its linked
  // read never runs.
  const int connected = fd_;
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd_, 0);
  const int ret = Run(request, in, {{out.data(), out.size()}});
  close(fd_);
  fd_ = connected;
  ASSERT_EQ(ret, 0);
  EXPECT_LT(request.result, 0);
  EXPECT_EQ(out, Bytes(64, 0xee));
}

TEST_F(RingTest, ALongerRequestIsRefusedUnsent) {
  const Bytes in = Random(64, 5);
  Bytes out(BounceBuffers::kBytes + 1, 0xee);
  Request request;
  EXPECT_EQ(Run(request, in, {{out.data(), out.size()}}), -EMSGSIZE);
  EXPECT_FALSE(Pending());
  EXPECT_EQ(out, Bytes(BounceBuffers::kBytes + 1, 0xee));
}

// On a new thread (a new ring, none of its buffers mapped yet).
TEST_F(RingTest, NoBounceBufferNoRequest) {
  std::thread([&] {
    const Bytes in = Random(64, 6);
    Bytes out(64, 0xee);
    Request request;
    InjectFault(Fault::kBounceMap, 1, -ENOMEM);
    EXPECT_EQ(Run(request, in, {{out.data(), out.size()}}), -ENOMEM);
    EXPECT_FALSE(Pending());
    EXPECT_EQ(out, Bytes(64, 0xee));
    // Mapped at the next request.
    ASSERT_EQ(Run(request, in, {{out.data(), out.size()}}), 0);
    EXPECT_EQ(request.result, 64);
    EXPECT_EQ(out, in);
  }).join();
}

}  // namespace
}  // namespace aesmux::afalg
