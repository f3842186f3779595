//===- ExamplesTest.cpp - Every example through compiler, plan and NVRTC --===//
//
// Without a GPU: runs the real mscclc binary (MSCCLC_COMPILER) on every
// example, reads its plan with the runtime's parser and compiles the
// generated CUDA with NVRTC for sm_90, as the JIT API does before a launch.
// A mismatch between the code generator, the plan format and the runtime
// shows up here, in CI.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Program.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <string>
#include <vector>

using namespace mscclc::rt;

namespace {

std::vector<std::string> examples() {
  std::vector<std::string> out;
  const char *dir = getenv("MSCCLC_EXAMPLES_DIR");
  if (!dir)
    return out;
  if (DIR *d = opendir(dir)) {
    while (dirent *e = readdir(d)) {
      std::string f = e->d_name;
      if (f.size() > 5 && f.substr(f.size() - 5) == ".mscl" && f != "common.mscl")
        out.push_back(std::string(dir) + "/" + f);
    }
    closedir(d);
  }
  return out;
}

} // namespace

TEST(ExamplesTest, CompilerPlanAndNvrtcAgree) {
  std::vector<std::string> files = examples();
  ASSERT_FALSE(files.empty()) << "set MSCCLC_EXAMPLES_DIR";
  for (const std::string &file : files) {
    CompilerOptions opts;
    opts.ranks = 2;
    std::unique_ptr<Program> p;
    Status s = Program::compileFile(file, opts, &p);
    if (!s.isOk() && s.message().find("require") != std::string::npos)
      continue; // the algorithm refuses this shape (e.g. needs several nodes)
    ASSERT_TRUE(s.isOk()) << file << ": " << s.message();
    const Plan &plan = p->plan();
    EXPECT_EQ(plan.ranks, 2) << file;
    ASSERT_EQ(plan.rankPlans.size(), 2u);
    std::string cubin;
    CompileStats stats;
    s = p->cubin(90, "f32", "sum", 0, &cubin, &stats);
    EXPECT_TRUE(s.isOk()) << file << ": " << s.message();
    EXPECT_GT(cubin.size(), 1000u) << file;
    // Only the requested rank's kernel is compiled.
    EXPECT_NE(cubin.find(plan.rankPlans[0].kernel), std::string::npos) << file;
    if (plan.rankPlans[1].kernel != plan.rankPlans[0].kernel)
      EXPECT_EQ(cubin.find(plan.rankPlans[1].kernel), std::string::npos) << file;
    if (plan.supportsDtype("bf16")) {
      s = p->cubin(90, "bf16", "sum", 0, &cubin, &stats);
      EXPECT_TRUE(s.isOk()) << file << " bf16: " << s.message();
    }
  }
}
