//===- tcp_transport_bench.cpp - A port put over TCP vs a plain socket ----===//
//
// Two processes over 127.0.0.1 play ping-pong with messages of one size:
// once as port-channel puts with signals through the TCP transport (host
// memory: what the transport adds to the socket, without GPU staging), once
// as plain blocking sends and receives of the same bytes on a TCP socket.
// Prints the one-way time (half a round trip) and the bandwidth it implies.
//
//   mscclc-tcp-bench [--max-bytes N] [--slice-bytes N]
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"
#include "mscclc/runtime/Socket.h"
#include "mscclc/runtime/TcpTransport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;
using Clock = std::chrono::steady_clock;

namespace {

struct Remote {
  uint64_t window, size, semaphore;
};

int iterationsFor(uint64_t bytes) {
  return int(std::clamp<uint64_t>((uint64_t(512) << 20) / bytes, 5, 2000));
}

bool ok(const Status &s, int rank) {
  if (!s.isOk())
    fprintf(stderr, "rank %d: %s\n", rank, s.message().c_str());
  return s.isOk();
}

/// Yields while waiting: the transport's threads need the cores (on the
/// GPU, the kernel waits instead).
void waitAtLeast(const uint64_t *semaphore, uint64_t value) {
  while (__atomic_load_n(semaphore, __ATOMIC_ACQUIRE) < value)
    std::this_thread::yield();
}

/// One-way seconds of a port put + signal of `bytes`, as ping-pong.
double portPut(int rank, TcpNetwork &net, Transport &t, uint64_t *semaphore,
               uint64_t bytes, Bootstrap &b, uint64_t *round) {
  int iters = iterationsFor(bytes);
  if (!ok(b.barrier(), rank))
    exit(1);
  auto start = Clock::now();
  for (int i = 0; i < iters + 3; ++i) {
    if (i == 3)
      start = Clock::now(); // after the warm-up
    ++*round;
    if (rank == 0) {
      if (!ok(t.put(0, 0, 0, 0, bytes), rank) || !ok(t.signal(), rank))
        exit(1);
      waitAtLeast(semaphore, *round);
    } else {
      waitAtLeast(semaphore, *round);
      if (!ok(t.put(0, 0, 0, 0, bytes), rank) || !ok(t.signal(), rank))
        exit(1);
    }
  }
  (void)net;
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  return s / iters / 2;
}

/// The same exchange as blocking sends and receives on a socket.
double plainSocket(int rank, int fd, std::vector<char> &buf, uint64_t bytes,
                   Bootstrap &b) {
  int iters = iterationsFor(bytes);
  if (!ok(b.barrier(), rank))
    exit(1);
  net::Deadline d = net::Deadline::in(60, "bench", "none");
  auto start = Clock::now();
  for (int i = 0; i < iters + 3; ++i) {
    if (i == 3)
      start = Clock::now();
    Status s;
    if (rank == 0) {
      s = net::sendAll(fd, buf.data(), bytes, d, "ping");
      if (s.isOk())
        s = net::recvAll(fd, buf.data(), bytes, d, "pong");
    } else {
      s = net::recvAll(fd, buf.data(), bytes, d, "ping");
      if (s.isOk())
        s = net::sendAll(fd, buf.data(), bytes, d, "pong");
    }
    if (!ok(s, rank))
      exit(1);
  }
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  return s / iters / 2;
}

/// A plain socket between the two ranks (rank 1 listens).
net::Fd plainConnection(int rank, Bootstrap &b) {
  wire::WireAddr where = b.listenAddress(), addrs[2];
  where.port = 0;
  net::Fd listener, fd;
  net::Deadline d = net::Deadline::in(30, "bench", "none");
  if (rank == 1 && !ok(net::listenOn(where, &listener, &addrs[1]), rank))
    exit(1);
  if (!ok(b.allGather(addrs, sizeof(wire::WireAddr)), rank))
    exit(1);
  if (rank == 0) {
    if (!ok(net::connectTo(addrs[1], d, &fd), rank))
      exit(1);
  } else {
    if (!ok(net::waitFd(listener.get(), POLLIN, d, "accepting"), rank))
      exit(1);
    fd = net::Fd(accept(listener.get(), nullptr, nullptr));
    if (fd.get() < 0 || !ok(net::setNonBlocking(fd.get()), rank))
      exit(1);
  }
  return fd;
}

int runRank(int rank, const UniqueId &id, uint64_t maxBytes,
            uint64_t sliceBytes, int out) {
  std::unique_ptr<Bootstrap> b;
  if (!ok(Bootstrap::create(id, rank, 2, &b), rank))
    return 1;
  TcpOptions o;
  if (!ok(tcpOptionsFromEnv(&o), rank))
    return 1;
  if (sliceBytes)
    o.sliceBytes = sliceBytes;
  std::unique_ptr<TcpNetwork> net;
  if (!ok(TcpNetwork::connect(*b, {1 - rank}, o, &net), rank))
    return 1;
  std::vector<char> window(maxBytes), src(maxBytes, char(rank));
  uint64_t semaphore = 0;
  uint32_t handle = 0;
  Remote all[2] = {};
  if (!ok(net->registerWindow(window.data(), maxBytes, MemoryKind::Host,
                              &handle),
          rank) ||
      !ok(net->registerSemaphores(&semaphore, 1, MemoryKind::Host, &handle),
          rank))
    return 1;
  all[rank] = {reinterpret_cast<uint64_t>(window.data()), maxBytes,
               reinterpret_cast<uint64_t>(&semaphore)};
  if (!ok(b->allGather(all, sizeof(Remote)), rank))
    return 1;
  TcpChannelSpec spec;
  spec.src[0] = src.data();
  spec.srcExtent[0] = maxBytes;
  spec.dst[0] = all[1 - rank].window;
  spec.dstExtent[0] = all[1 - rank].size;
  spec.semaphore = all[1 - rank].semaphore;
  std::unique_ptr<Transport> t;
  if (!ok(net->channel(1 - rank, spec, &t), rank))
    return 1;
  net::Fd plain = plainConnection(rank, *b);
  uint64_t round = 0;
  for (uint64_t bytes = 8; bytes <= maxBytes; bytes *= 8) {
    double put = portPut(rank, *net, *t, &semaphore, bytes, *b, &round);
    double sock = plainSocket(rank, plain.get(), src, bytes, *b);
    if (rank == 0) {
      char line[160];
      int n = snprintf(line, sizeof(line),
                       "| %10llu | %10.1f | %8.2f | %10.1f | %8.2f |\n",
                       static_cast<unsigned long long>(bytes), put * 1e6,
                       double(bytes) / put / 1e9, sock * 1e6,
                       double(bytes) / sock / 1e9);
      if (write(out, line, size_t(n)) != n)
        return 1;
    }
  }
  t.reset();
  return ok(b->barrier(), rank) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  uint64_t maxBytes = uint64_t(64) << 20, sliceBytes = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-bytes" && i + 1 < argc)
      maxBytes = strtoull(argv[++i], nullptr, 0);
    else if (a == "--slice-bytes" && i + 1 < argc)
      sliceBytes = strtoull(argv[++i], nullptr, 0);
    else {
      fprintf(stderr, "usage: %s [--max-bytes N] [--slice-bytes N]\n", argv[0]);
      return 2;
    }
  }
  setenv("MSCCLC_BOOTSTRAP_ADDR", "127.0.0.1", 0);
  UniqueId id;
  if (!createUniqueId(&id).isOk())
    return 1;
  printf("| bytes      | put us     | put GB/s | socket us  | sock GB/s|\n"
         "| ---------- | ---------- | -------- | ---------- | -------- |\n");
  fflush(stdout);
  pid_t kids[2];
  for (int r = 0; r < 2; ++r) {
    kids[r] = fork();
    if (kids[r] == 0)
      _exit(runRank(r, id, maxBytes, sliceBytes, STDOUT_FILENO));
  }
  int failed = 0;
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  return failed;
}
