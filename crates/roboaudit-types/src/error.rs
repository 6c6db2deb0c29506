//! One rendering of an error with its causes, for every place that turns an error into text.

use std::error::Error;

/// The error's message followed by each of its causes (`source()`, then that one's, …), joined
/// by `": "`: `cannot read a.csv: No such file or directory (os error 2)`.
///
/// A message in roboaudit never prints its own `#[source]`, so a plain join says each phrase
/// once. Third-party errors may: a cause is left out when its text is exactly the previous
/// link's, or when the previous link ends with `": "` and it (parquet's `External: {e}`,
/// arrow's `External error: {e}` and `Io error: {e}` print their source so).
///
/// Never fails; an error without a source renders as its message alone.
pub fn error_chain(err: &(dyn Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut previous = out.clone();
    let mut cause = err.source();
    while let Some(c) = cause {
        let text = c.to_string();
        let repeated = previous == text
            || previous
                .strip_suffix(text.as_str())
                .is_some_and(|head| head.ends_with(": "));
        if !repeated {
            out.push_str(": ");
            out.push_str(&text);
        }
        previous = text;
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_chain;
    use std::fmt;

    /// A test error: a message and an optional cause.
    #[derive(Debug)]
    struct Link(&'static str, Option<Box<Link>>);

    impl fmt::Display for Link {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Link {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    fn chain(texts: &[&'static str]) -> Link {
        let mut it = texts.iter().rev();
        let mut link = Link(it.next().unwrap(), None);
        for t in it {
            link = Link(t, Some(Box::new(link)));
        }
        link
    }

    #[test]
    fn joins_message_and_causes_in_order() {
        assert_eq!(error_chain(&chain(&["alone"])), "alone");
        assert_eq!(
            error_chain(&chain(&["cannot read a.csv", "row 3", "not a number"])),
            "cannot read a.csv: row 3: not a number"
        );
    }

    #[test]
    fn leaves_out_a_cause_the_previous_link_repeats() {
        // Exactly the previous text.
        assert_eq!(error_chain(&chain(&["x", "x", "y"])), "x: y");
        // Printed at the end of the previous text, as parquet's `External: {e}` does.
        assert_eq!(
            error_chain(&chain(&[
                "cannot read f",
                "External: bad footer",
                "bad footer"
            ])),
            "cannot read f: External: bad footer"
        );
    }

    #[test]
    fn keeps_a_cause_that_only_resembles_an_earlier_link() {
        // Held inside the message, but not at its end after ": ": said again.
        assert_eq!(
            error_chain(&chain(&["open: gone, in a.mp4", "gone"])),
            "open: gone, in a.mp4: gone"
        );
        // Repeats the first link, not the one before it.
        assert_eq!(error_chain(&chain(&["a", "b", "a"])), "a: b: a");
        // A suffix without the ": " before it.
        assert_eq!(
            error_chain(&chain(&["cannot open xa", "a"])),
            "cannot open xa: a"
        );
    }
}
