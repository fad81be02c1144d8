#pragma once
// Text from the database or a spec on its way into the HTML report. The database may come from
// anyone (db import, merge), so a variant name or a reason is data, never markup: it goes into
// element content and attribute values only through html_escape.
//
//   html_escape("<script>a=\"1\"</script>")  -> "&lt;script&gt;a=&quot;1&quot;&lt;/script&gt;"
#include <string>
#include <string_view>

namespace fusetune::report {

// & < > " ' as character references, safe in element content and in quoted attribute values.
// Control and invisible characters (a bidi override would reorder what the page shows), tabs
// and line breaks become what text::single_line makes of them; bytes that are not UTF-8 become
// '?', so the page is always valid UTF-8.
[[nodiscard]] std::string html_escape(std::string_view text);

// html_escape of at most `max_bytes` of `text`, "..." marking a cut: labels in a plot must not
// grow without bound.
[[nodiscard]] std::string html_excerpt(std::string_view text, std::size_t max_bytes);

}  // namespace fusetune::report
