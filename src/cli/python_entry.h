// Commands whose work is Python by nature (a Ray driver, TRL trainers) hand their arguments to a module of the rldk
// package, run by the interpreter rldk was installed with.
#pragma once

#include <string>
#include <vector>

namespace rldk::cli {

// Replaces this process with `PYTHON -m MODULE ARGS...`. PYTHON is $RLDK_PYTHON, else the python3 beside this rldk
// (a virtual environment's bin/), else python3 on PATH. Returns (exit code 2, after a message naming `needs`) only
// when the interpreter cannot be started.
int exec_python_module(const char* me, const std::string& module, const std::vector<std::string>& args,
                       const char* needs);

}  // namespace rldk::cli
