// numfuse: numpy-style arrays whose expressions run as fused kernels.
#pragma once

#include "numfuse/array.hpp"
#include "numfuse/device.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/eval.hpp"
#include "numfuse/expr.hpp"
#include "numfuse/io.hpp"
#include "numfuse/ops.hpp"
#include "numfuse/print.hpp"
#include "numfuse/random.hpp"
#include "numfuse/record.hpp"
#include "numfuse/shape.hpp"
