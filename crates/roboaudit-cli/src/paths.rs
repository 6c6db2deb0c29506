//! Paths compared as the file system resolves them and the output-path checks several commands
//! make (exit code 2), from [`roboaudit_data::outpath`].

pub use roboaudit_data::outpath::{
    check_cache_folder, is_within, refuse_inside_dataset, require_extension, same_file,
};
