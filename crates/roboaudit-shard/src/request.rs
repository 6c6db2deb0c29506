//! What `roboaudit merge` and `roboaudit status` are given: the shard folders of one sharded
//! collection ([`crate::merge_checked`], [`crate::check_parts`]) and, to merge, the merged run
//! folder.

use std::path::PathBuf;

/// The options of `roboaudit merge`. Each field's documentation is its command-line help.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct MergeOptions {
    /// Shard folders (one per shard I of N, each written with `--shard I/N`), in any order.
    #[cfg_attr(
        feature = "clap",
        arg(value_name = "SHARD_DIR", required = true, num_args = 1..)
    )]
    pub shards: Vec<PathBuf>,
    /// Merged run folder (new or empty): what an unsharded run of the same configuration writes.
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR"))]
    pub out: PathBuf,
}

/// The options of `roboaudit status`. Its field's documentation is its command-line help.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StatusOptions {
    /// Shard folders of one sharded collection (folders of several are listed too, and reported
    /// as not mergeable together).
    #[cfg_attr(
        feature = "clap",
        arg(value_name = "SHARD_DIR", required = true, num_args = 1..)
    )]
    pub shards: Vec<PathBuf>,
}
