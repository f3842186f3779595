//===- FdPassingTest.cpp - Descriptors reach another process -------------===//

#include "mscclc/runtime/FdPassing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mscclc::rt;

namespace {

std::string uniqueName(const char *what) {
  return std::string("mscclc-test-") + what + "-" + std::to_string(getpid());
}

FdToken tokenOf(uint8_t fill) {
  FdToken t;
  memset(t.bytes, fill, sizeof(t.bytes));
  return t;
}

/// A connection to abstract socket `name` that sends `bytes` of `token`
/// and then waits: a stranger to the server.
int strangerConnects(const std::string &name, const FdToken &token,
                     size_t bytes) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&addr), len), 0);
  if (bytes)
    EXPECT_EQ(send(fd, token.bytes, bytes, MSG_NOSIGNAL), ssize_t(bytes));
  return fd;
}

/// Whether the server closed `fd` without passing a descriptor.
bool closedWithoutDescriptor(int fd) {
  char byte;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov = {&byte, 1};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1)
    return false;
  return recvmsg(fd, &msg, 0) == 0 && CMSG_FIRSTHDR(&msg) == nullptr;
}

} // namespace

// Two child processes each receive the write end of a pipe and write
// through it: the parent reads what both wrote.
TEST(FdPassingTest, ChildrenWriteThroughThePassedDescriptor) {
  std::string name = uniqueName("pipe");
  std::unique_ptr<FdServer> server;
  ASSERT_TRUE(FdServer::listen(name, &server).isOk());
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  pid_t children[2];
  for (int i = 0; i < 2; ++i) {
    children[i] = fork();
    ASSERT_GE(children[i], 0);
    if (children[i] == 0) {
      close(pipeFds[0]);
      close(pipeFds[1]); // the child writes only through the received copy
      int fd = -1;
      if (!receiveFd(name, tokenOf(7), 10000, &fd).isOk())
        _exit(2);
      char c = char('a' + i);
      _exit(write(fd, &c, 1) == 1 ? 0 : 3);
    }
  }
  Status s = server->serve(pipeFds[1], 2, tokenOf(7), 10000);
  EXPECT_TRUE(s.isOk()) << s.message();
  close(pipeFds[1]);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string got;
  char buf[8];
  ssize_t n;
  while ((n = read(pipeFds[0], buf, sizeof buf)) > 0)
    got.append(buf, size_t(n));
  close(pipeFds[0]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, "ab");
}

TEST(FdPassingTest, ServerTimesOutWhenClientsStayAway) {
  std::unique_ptr<FdServer> server;
  ASSERT_TRUE(FdServer::listen(uniqueName("lonely"), &server).isOk());
  Status s = server->serve(0, 1, tokenOf(7), 50);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("0 of 1 processes connected"), std::string::npos)
      << s.message();
}

TEST(FdPassingTest, ClientTimesOutWithoutServer) {
  int fd = -1;
  Status s = receiveFd(uniqueName("nobody"), tokenOf(7), 50, &fd);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("connect"), std::string::npos) << s.message();
}

TEST(FdPassingTest, NameInUseIsAnError) {
  std::string name = uniqueName("twice");
  std::unique_ptr<FdServer> first, second;
  ASSERT_TRUE(FdServer::listen(name, &first).isOk());
  Status s = FdServer::listen(name, &second);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("bind"), std::string::npos) << s.message();
}

// Strangers connect first (any process can reach an abstract socket): one
// with a wrong token, one with half a token, one silent. None gets the
// descriptor or uses up the one client's turn; the client, whose token
// came over the bootstrap, then gets it.
TEST(FdPassingTest, StrangersGetNoDescriptor) {
  std::string name = uniqueName("strangers");
  std::unique_ptr<FdServer> server;
  ASSERT_TRUE(FdServer::listen(name, &server).isOk());
  FdToken token = tokenOf(0x5c);
  int wrong = strangerConnects(name, tokenOf(0x5d), sizeof(token.bytes));
  int half = strangerConnects(name, token, sizeof(token.bytes) / 2);
  int silent = strangerConnects(name, token, 0);
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  Status served;
  std::thread serving(
      [&] { served = server->serve(pipeFds[1], 1, token, 10000); });
  EXPECT_TRUE(closedWithoutDescriptor(wrong)) << "the wrong token got it";
  EXPECT_TRUE(closedWithoutDescriptor(half)) << "half a token got it";
  EXPECT_TRUE(closedWithoutDescriptor(silent)) << "silence got it";
  int fd = -1;
  Status got = receiveFd(name, token, 10000, &fd);
  serving.join();
  EXPECT_TRUE(served.isOk()) << served.message();
  ASSERT_TRUE(got.isOk()) << got.message();
  EXPECT_EQ(write(fd, "x", 1), 1) << "the passed copy is the pipe's end";
  char c = 0;
  EXPECT_EQ(read(pipeFds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  for (int f : {wrong, half, silent, fd, pipeFds[0], pipeFds[1]})
    close(f);
}

// A client with a wrong token is told so, not handed a descriptor.
TEST(FdPassingTest, WrongTokenIsAClearError) {
  std::string name = uniqueName("wrong");
  std::unique_ptr<FdServer> server;
  ASSERT_TRUE(FdServer::listen(name, &server).isOk());
  Status served;
  std::thread serving([&] { served = server->serve(0, 1, tokenOf(1), 1500); });
  int fd = -1;
  Status got = receiveFd(name, tokenOf(2), 10000, &fd);
  serving.join();
  EXPECT_FALSE(got.isOk());
  EXPECT_NE(got.message().find("token"), std::string::npos) << got.message();
  EXPECT_FALSE(served.isOk()) << "the one client never came";
}
