// SPDX-License-Identifier: MIT
#pragma once

// The text report inside the HTML report, as HTML: its paragraphs as paragraphs and its tables
// as tables (every column, whatever the terminal), written by the text report's own writers
// through a TextSink, then the plain text collapsed below for copying.

#include <functional>
#include <ostream>
#include <string>

namespace rsim {

/// A <section id="text"> with what `writer` writes to its stream rendered as HTML, and the same
/// as plain text in a collapsed <details> titled `summary`.
void write_text_section(std::ostream& out, const std::string& summary,
                        const std::function<void(std::ostream&)>& writer);

}  // namespace rsim
