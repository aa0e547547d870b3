// Reports on fatal signals (report_on_signal). Runtime-safe: no malloc.
#pragma once

namespace memtrack::rt {

// Installs the report-on-signal handlers (report_on_signal option). Called once.
void install_signal_report();

}  // namespace memtrack::rt
