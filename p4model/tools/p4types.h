// p4types: P4_16's width rules, checked over everything p4reader read, so
// that a source no P4 compiler would accept is refused instead of compared.
//
// P4_16 (spec v1.2.4, 8.11.2 "Implicit casts") converts implicitly only from
// an untyped integer (`int`) to a fixed-width type, and from a serializable
// enum to its underlying type; between bit<N> and bit<M> (N != M) every
// conversion is an explicit cast. So an assignment, an operand pair of a
// binary operator (other than shifts and `++`), the branches of `?:`, and an
// argument of a control's apply, an action call or a RegisterAction's
// `execute` whose fixed widths differ are type errors, as is a slice [hi:lo]
// with hi at or past its operand's width (8.6) and a RegisterAction whose
// element or index type differs from its Register's (tna.p4: RegisterAction
// <T, I, U>(Register<T, I> reg)). p4c's type checker (frontends/p4/
// typeChecking) rejects each; bf-p4c uses the same front end.
//
// The check is conservative: an expression whose type it cannot name (an
// extern it does not know, a generic call, a table's apply) is left alone,
// so it may accept what a compiler rejects, never the other way round.
#pragma once

#include "p4model/tools/p4reader.h"

#include <string>
#include <vector>

namespace inasim::p4tools {

/// Every violation, "file:line: what", in source order within each block; empty
/// when the rules above find nothing.
std::vector<std::string> WidthViolations(const p4src::Program& prog);

/// Throws p4src::InvalidP4 naming the first violation (and how many) if any.
void RequireValidWidths(const p4src::Program& prog);

}  // namespace inasim::p4tools
