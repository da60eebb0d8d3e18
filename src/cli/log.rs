//! Log lines on stderr: `warning: ...`, `info: ...`, flush left. tracing's own format pads the
//! level to five columns (` INFO`, ` WARN`), so a line started with a space, which CI logs and
//! `grep '^warning'` trip over.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Whether stderr gets colours: a terminal, and no `NO_COLOR` with a value (https://no-color.org:
/// "when present and not an empty string").
pub fn colour() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::IsTerminal::is_terminal(&std::io::stderr())
}

/// The level's word, as the error line `main` prints (`error: ...`).
pub fn label(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

/// One event as `LABEL: MESSAGE`, the label coloured when the writer takes colours.
pub struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = event.metadata().level();
        let word = label(level);
        if writer.has_ansi_escapes() {
            // Bold red, yellow, green, blue, purple: the colours tracing's own format uses.
            let colour = match *level {
                Level::ERROR => "31",
                Level::WARN => "33",
                Level::INFO => "32",
                Level::DEBUG => "34",
                Level::TRACE => "35",
            };
            write!(writer, "\x1b[1;{colour}m{word}\x1b[0m: ")?;
        } else {
            write!(writer, "{word}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
