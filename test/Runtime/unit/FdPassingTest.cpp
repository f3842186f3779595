//===- FdPassingTest.cpp - Descriptors reach another process -------------===//

#include "mscclc/runtime/FdPassing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

using namespace mscclc::rt;

namespace {

std::string uniqueName(const char *what) {
  return std::string("mscclc-test-") + what + "-" + std::to_string(getpid());
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
      if (!receiveFd(name, 10000, &fd).isOk())
        _exit(2);
      char c = char('a' + i);
      _exit(write(fd, &c, 1) == 1 ? 0 : 3);
    }
  }
  Status s = server->serve(pipeFds[1], 2, 10000);
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
  Status s = server->serve(0, 1, 50);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("0 of 1 processes connected"), std::string::npos)
      << s.message();
}

TEST(FdPassingTest, ClientTimesOutWithoutServer) {
  int fd = -1;
  Status s = receiveFd(uniqueName("nobody"), 50, &fd);
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
