//===- mscclc.cpp - The mscclc command-line compiler ---------------------===//
//
// Parses the command line and runs the driver (Driver.h).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mscclc::tools::registerDriverOptions();
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    mscclc::tools::kDriverOverview);
  return mscclc::tools::runDriver();
}
