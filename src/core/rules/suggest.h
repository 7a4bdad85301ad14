// "Did you mean" for misspelt names in rule expressions.
#pragma once

#include "rldk/suggest.h"

namespace rldk::rules {

// The one implementation lives in rldk/suggest.h (the command line suggests commands with it too).
using rldk::closest_name;

}  // namespace rldk::rules
