#pragma once
// The AppContext module in one include: the value (value.hpp), its plan's
// persistence (persistence.hpp), header rows, deploy-status rows, queue rows,
// the child contexts a context owes, and diff, each declared in its own header.

#include "core/appcontext/children_rows.hpp"
#include "core/appcontext/diff.hpp"
#include "core/appcontext/header_rows.hpp"
#include "core/appcontext/persistence.hpp"
#include "core/appcontext/queue_rows.hpp"
#include "core/appcontext/status_rows.hpp"
#include "core/appcontext/value.hpp"
