//! The error type of the sharding crate.

use thiserror::Error;

/// Everything that can go wrong while parsing a shard, reading shard folders or merging them.
#[derive(Debug, Error)]
pub enum ShardError {
    /// A `--shard I/N` value that is not two integers with `0 ≤ I < N`.
    #[error("invalid shard \"{given}\": {reason} (expected I/N with 0 <= I < N, e.g. 0/3)")]
    InvalidSpec {
        /// The text given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The shard folders do not form one complete, consistent collection (the message names the
    /// folder, shard or job at fault).
    #[error("cannot merge these shard folders:{0}")]
    Inconsistent(String),
    /// A folder is not a shard folder or its shard manifest is unreadable.
    #[error("{path}: {reason}")]
    NotAShard {
        /// The folder or its manifest.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A collector's output folder holds another shard, another configuration's shard, or an
    /// unsharded run, so writing this shard there would mix runs.
    #[error("cannot use {path} for this shard: {reason}")]
    Conflict {
        /// The folder.
        path: String,
        /// What it holds instead.
        reason: String,
    },
    /// The output folder exists and is not empty.
    #[error("output folder {0} exists and is not empty; merge into a new folder")]
    OutputExists(String),
    /// The output folder lies inside one of the shard folders being merged (a later merge or
    /// status of that shard would find the merged run in it).
    #[error(
        "output folder {out} lies inside the shard folder {shard}; merge into a folder outside every shard folder"
    )]
    OutputInsideShard {
        /// The output folder as given.
        out: String,
        /// The shard folder that contains it.
        shard: String,
    },
    /// The collection's finishing step (e.g. assembling a memory collection's records from its
    /// merged pairs) failed on the merged folder; nothing was written to the output folder.
    #[error(
        "the merged {collection} shards do not assemble, so nothing was written to {out} (a file named in the reason that follows is the merged copy of the shard file of the same relative path)"
    )]
    Finish {
        /// The collection kind.
        collection: String,
        /// The output folder.
        out: String,
        /// The collection's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file could not be read, written, listed or renamed.
    #[error("cannot {action} {path}")]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The file or folder.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A shard manifest could not be encoded or decoded, or a configuration could not be hashed.
    #[error("shard manifest {path}")]
    Json {
        /// The manifest file (or the configuration being hashed).
        path: String,
        /// The cause.
        source: serde_json::Error,
    },
}

impl ShardError {
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> ShardError {
        let path = path.display().to_string();
        move |source| ShardError::Io {
            action,
            path,
            source,
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ShardError>;
