//===- mscl-opt.cpp - Runs mscl passes on .mlir files -------------------===//

#include "mscl/IR/MsclDialect.h"
#include "mscl/Verification/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mscl::registerVerificationPasses();
  mlir::DialectRegistry registry;
  registry.insert<mscl::MsclDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mscl optimizer driver\n", registry));
}
