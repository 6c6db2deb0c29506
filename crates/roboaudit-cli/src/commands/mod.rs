//! One module per top-level subcommand.

pub mod data;
pub mod demo;
pub mod detect;
pub mod embed;
pub mod fqe;
pub mod fqe_actions;
pub mod fqe_collect;
pub mod memory;
pub mod report;
pub mod retrieval;
pub mod shard;
pub mod testbed;
pub mod validate;
