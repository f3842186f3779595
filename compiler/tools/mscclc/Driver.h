//===- Driver.h - The mscclc command line: options and what they run -*- C++ -*-===//
//
// mscclc's options are LLVM command-line options (globals of Driver.cpp);
// main registers them, parses argv and runs the driver. The command-line
// fuzzer does the same many times in one process, resetting the options
// in between (cl::ResetAllOptionOccurrences).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TOOLS_MSCCLC_DRIVER_H
#define MSCCLC_TOOLS_MSCCLC_DRIVER_H

namespace mscclc::tools {

/// Registers mscclc's options and MLIR's pass-manager, timing, context and
/// printing options. Once per process.
void registerDriverOptions();

/// What --help says mscclc is.
extern const char *const kDriverOverview;

/// Checks the parsed options, reads the input and writes what --emit asks
/// for. Returns the process's exit status (0: done, 1: an error, reported).
int runDriver();

} // namespace mscclc::tools

#endif // MSCCLC_TOOLS_MSCCLC_DRIVER_H
