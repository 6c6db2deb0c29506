//! What `roboaudit report` is given ([`ReportOptions`]): the folders [`crate::build_report`]
//! reads and the folder [`crate::write_report`] writes.

use std::path::PathBuf;

/// The output folder of a report when none is given.
pub const DEFAULT_OUT: &str = "roboaudit-report";

/// The options of `roboaudit report`. Each field's documentation is its command-line help.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ReportOptions {
    /// Audit output folders (retrieval or demo `audit.json`, memory audit `audit.json`,
    /// `fqe.json`) and retrieval run folders (for the transfer matrix), any number.
    #[cfg_attr(feature = "clap", arg(required = true, value_name = "DIR"))]
    pub dirs: Vec<PathBuf>,
    /// Output folder for `report.json`, `report.md` and `index.html`.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DIR", default_value = DEFAULT_OUT)
    )]
    pub out: PathBuf,
}
