//===- mscl-opt.cpp - Runs mscl passes on .mlir files -------------------===//
//
// MlirOptMain with the mscl dialect and passes, and
// --mscl-validate-translation: translation validation after every pass
// (mscl/Verification/TranslationValidation.h), failing the run when a pass
// changed what a program computes and the passes run succeeded.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclDialect.h"
#include "mscl/Transforms/Passes.h"
#include "mscl/Verification/Passes.h"
#include "mscl/Verification/TranslationValidation.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mscl::registerVerificationPasses();
  mscl::registerTransformPasses();
  mlir::DialectRegistry registry;
  registry.insert<mscl::MsclDialect>();

  static llvm::cl::opt<bool> validate(
      "mscl-validate-translation",
      llvm::cl::desc("Check after every pass that it kept what each "
                     "mscl.program computes (translation validation)"),
      llvm::cl::init(false));
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "mscl optimizer driver\n", registry);
  // The pipeline the command line asks for, then the validation.
  mlir::MlirOptMainConfig base = mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::MlirOptMainConfig config = base;
  mscl::TranslationValidation validation;
  config.setPassPipelineSetupFn([&](mlir::PassManager &pm) {
    if (mlir::failed(base.setupPassPipeline(pm)))
      return mlir::failure();
    if (validate)
      pm.addInstrumentation(validation.instrumentation());
    return mlir::success();
  });
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  std::unique_ptr<llvm::ToolOutputFile> output =
      input ? mlir::openOutputFile(outputFile, &error) : nullptr;
  if (!input || !output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return 1;
  if (validation.failed()) {
    validation.printErrors(llvm::errs());
    return 1;
  }
  output->keep();
  return 0;
}
