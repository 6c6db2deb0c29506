//! The `roboaudit` command-line tool: the only crate that prints.
//!
//! A library with one public function, [`main`], so that two binaries share one compiled crate:
//! `roboaudit` (the cargo route) and `roboaudit-native` (the same program under the name the
//! Python wheel installs beside its `roboaudit` launcher, which sets MuJoCo's library path first).
//!
//! Exit codes (also in `roboaudit --help`): 0 success; 1 failure (writing output, internal); 2 usage
//! error; 3 invalid input (a missing, unreadable or malformed input file: the message names the file,
//! and the row and column where there is one).

// The CLI is where printing belongs: to stderr directly, to stdout only through `outln!`/`out!`
// (`println!` panics when the reader is gone), so `print_stdout` stays a warning here too.
#![allow(clippy::print_stderr)]

// First, so that `outln!` and `out!` are in scope in every module after it.
#[macro_use]
mod stdout;
mod commands;
mod exit;
mod output;
mod paths;
mod progress;

use clap::{Parser, Subcommand};

/// mimalloc keeps freed memory for reuse where glibc's malloc handed the large blocks of the
/// audits' tables back to the kernel and took page faults to get them again (Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  failure (writing output, internal error)
  2  command-line usage error
  3  invalid input: a missing, unreadable or malformed input file
     (the message names the file, and the row and column where there is one)

\"SPEC §N\" in these texts is §N of docs/methods.md in the repository: each
quantity's definition, formula and source paper section.";

/// roboaudit: what robot-learning evaluation numbers really mean.
#[derive(Debug, Parser)]
#[command(name = "roboaudit", version, about, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Retrieval audit (SPEC §1): judge experience-selection rules against the full transfer matrix.
    #[command(subcommand)]
    Retrieval(commands::retrieval::RetrievalCommand),
    /// Counterfactual memory audit (SPEC §2): analyse crossed-history records from any harness.
    #[command(subcommand)]
    Memory(commands::memory::MemoryCommand),
    /// The built-in MuJoCo testbed: render scenes, roll out experts to LeRobot datasets, write scene sets.
    #[command(subcommand)]
    Testbed(commands::testbed::TestbedCommand),
    /// Look at datasets (LeRobot v3.0 / v2.1) before auditing with them.
    #[command(subcommand)]
    Data(commands::data::DataCommand),
    /// Fitted Q evaluation (SPEC §3): estimate a policy's success from offline trajectories.
    #[command(subcommand)]
    Fqe(commands::fqe::FqeCommand),
    /// Render any set of audit output folders into one report: JSON, Markdown and self-contained HTML with plots.
    Report(roboaudit_report::request::ReportOptions),
    /// Run the audits on the built-in testbed and write one report: what a new user runs first.
    Demo(roboaudit_demo::DemoRequest),
    /// Merge the shard folders of a sharded collection (`--shard I/N`) into one run folder.
    Merge(roboaudit_shard::request::MergeOptions),
    /// Jobs done per shard folder of a sharded collection, from the files on disk.
    Status(roboaudit_shard::request::StatusOptions),
    /// Check one input file with the reader the audits use (exit 3 naming file, row and column).
    Validate(roboaudit_data::request::ValidateRequest),
    /// Representations (pixels32, ResNet-18, DINOv2, CLIP from local safetensors files) of a folder of images or a LeRobot dataset's first frames, as a retrieval embeddings file.
    Embed(roboaudit_encoders::EmbedOptions),
}

/// Gives rayon's global pool the thread count the user asked for (`RAYON_NUM_THREADS`, else one
/// per core) and tells candle to run single-threaded.
///
/// candle reads `RAYON_NUM_THREADS` and `CANDLE_NUM_THREADS` at each matrix product and keeps a
/// spinning pool of its own for element-wise ops. roboaudit parallelizes across independent fits
/// and frames instead (one neural fit per thread), where candle's own splitting of such small
/// products only adds synchronization: measured on 2 cores, 2 fits in parallel each ran 4× slower
/// with candle's threading on than with it off.
fn configure_threads() {
    let requested = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0);
    let threads = requested
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);
    // SAFETY: called first thing in `main`, before this process has started any other thread
    // (the rayon pool below is built afterwards), so nothing can read the environment while it
    // is written.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("RAYON_NUM_THREADS", "1");
        std::env::set_var("CANDLE_NUM_THREADS", "1");
    }
    // Fails only when a global pool already exists, which it cannot this early.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
}

/// Keeps SVT-AV1 (the AV1 encoder behind `--video`) to its error lines unless the user set
/// `SVT_LOG`: at its default level it writes a banner of about 16 `Svt[info]` lines to stderr for
/// every MP4, which buries roboaudit's own progress and notes. The encoder reads `SVT_LOG` when
/// it starts (levels: 1 errors, 2 warnings, 3 info).
fn quiet_encoder_banner() {
    if std::env::var_os("SVT_LOG").is_none() {
        // SAFETY: called first thing in `main`, before this process has started any other
        // thread, so nothing can read the environment while it is written.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("SVT_LOG", "1");
        }
    }
}

/// Has Mesa's software renderer (llvmpipe, what headless EGL runs on) rasterize in the thread
/// that renders, unless the user set `LP_NUM_THREADS`. By default llvmpipe hands every frame to
/// its own rasterizer threads, one per core, shared by all GL contexts: the collection's workers
/// then wait on each other's 64 × 64 frames, and a run limited to N threads uses more. Measured
/// on closed-loop Policy executions (2 cores): 15.2 s against 29.1 s for the same bytes
/// (BENCHMARKS.md).
fn rasterize_in_caller() {
    if std::env::var_os("LP_NUM_THREADS").is_none() {
        // SAFETY: called first thing in `main`, before this process has started any other
        // thread, so nothing can read the environment while it is written.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("LP_NUM_THREADS", "0");
        }
    }
}

/// Lets every subcommand take `-1` as an option's value, so `--seed -1` is reported as an
/// invalid value of `--seed` rather than as an unknown argument `-1`.
fn allow_negative_numbers(cmd: clap::Command) -> clap::Command {
    cmd.allow_negative_numbers(true)
        .mut_subcommands(allow_negative_numbers)
}

/// The whole program: parses the command line, runs the command and exits the process with the
/// exit code of the outcome (0, or 1/2/3 as listed in the crate documentation).
pub fn main() {
    quiet_encoder_banner();
    rasterize_in_caller();
    configure_threads();
    let matches = allow_negative_numbers(<Cli as clap::CommandFactory>::command()).get_matches();
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = run(cli);
    if let Err(err) = result {
        let closed_pipe = err.chain().any(|cause| {
            cause
                .downcast_ref::<stdout::StdoutError>()
                .is_some_and(stdout::StdoutError::is_closed_pipe)
        });
        if closed_pipe {
            std::process::exit(exit::FAILURE);
        }
        eprintln!("error: {}", render_error(&err));
        std::process::exit(exit::code_for(&err));
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Retrieval(cmd) => commands::retrieval::run(cmd),
        Command::Memory(cmd) => commands::memory::run(cmd),
        Command::Data(cmd) => commands::data::run(cmd),
        Command::Testbed(cmd) => commands::testbed::run(cmd),
        Command::Fqe(cmd) => commands::fqe::run(cmd),
        Command::Report(args) => commands::report::run(&args),
        Command::Demo(args) => commands::demo::run(&args),
        Command::Merge(args) => commands::shard::merge(&args),
        Command::Status(args) => commands::shard::status(&args),
        Command::Validate(args) => commands::validate::run(&args),
        Command::Embed(args) => commands::embed::run(&args),
    }
}

/// The error and its causes joined by ": " ([`roboaudit_types::error_chain`]: no message
/// repeats its source, so each phrase is said once).
fn render_error(err: &anyhow::Error) -> String {
    roboaudit_types::error_chain(&**err)
}
