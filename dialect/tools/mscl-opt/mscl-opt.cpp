//===- mscl-opt.cpp - Runs mscl passes on .mlir files -------------------===//

#include "mscl/IR/MsclDialect.h"
#include "mscl/Transforms/Passes.h"
#include "mscl/Verification/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mscl::registerVerificationPasses();
  mscl::registerTransformPasses();
  mlir::DialectRegistry registry;
  registry.insert<mscl::MsclDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mscl optimizer driver\n", registry));
}
