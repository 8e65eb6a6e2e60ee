// SPDX-License-Identifier: GPL-2.0
/* The tracepoints' definitions (sroce_trace.h); a leaf. */
#define CREATE_TRACE_POINTS
#include "sroce_trace.h"
