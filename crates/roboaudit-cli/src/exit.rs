//! Maps errors to the documented exit codes.

/// Exit code for a failure that is not the user's input (writing output, internal).
pub const FAILURE: i32 = 1;
/// Exit code for invalid input data.
pub const INVALID_INPUT: i32 = 3;

/// An error caused by invalid user input that no library error type describes, so `main` exits
/// with [`INVALID_INPUT`]; the string is the whole message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

/// The exit code for `err`: [`INVALID_INPUT`] when any cause is a data-validation error.
pub fn code_for(err: &anyhow::Error) -> i32 {
    let usage = err.chain().any(|cause| {
        cause.is::<Usage>()
            || cause.is::<roboaudit_data::outpath::OutputPathError>()
            || cause.is::<roboaudit_testbed::UnknownTask>()
            || matches!(
                cause.downcast_ref::<roboaudit_testbed::TestbedError>(),
                Some(
                    roboaudit_testbed::TestbedError::UnknownTask(_)
                        | roboaudit_testbed::TestbedError::InvalidParameter(_)
                )
            )
            // A representation name the embeddings lack is a wrong --structural value.
            || matches!(
                cause.downcast_ref::<roboaudit_retrieval::RetrievalError>(),
                Some(roboaudit_retrieval::RetrievalError::UnknownRepresentation { .. })
            )
            // A representation or embed setting out of range (found before any file is read).
            || matches!(
                cause.downcast_ref::<roboaudit_encoders::EncoderError>(),
                Some(roboaudit_encoders::EncoderError::InvalidConfig(_))
            )
            // An --out folder holding another kind of result: the wrong folder was named.
            || matches!(
                cause.downcast_ref::<roboaudit_memory::MemoryError>(),
                Some(roboaudit_memory::MemoryError::ExistingOutput { .. })
            )
    });
    if usage {
        return USAGE;
    }
    let invalid = err.chain().any(|cause| {
        cause.is::<InvalidInput>()
            || cause.is::<roboaudit_data::DataError>()
            || cause.is::<roboaudit_retrieval::RetrievalError>()
            || cause
                .downcast_ref::<roboaudit_encoders::EncoderError>()
                .is_some_and(roboaudit_encoders::EncoderError::is_invalid_input)
            || cause
                .downcast_ref::<roboaudit_memory::MemoryError>()
                .is_some_and(roboaudit_memory::MemoryError::is_invalid_input)
            || cause
                .downcast_ref::<roboaudit_report::ReportError>()
                .is_some_and(roboaudit_report::ReportError::is_invalid_input)
            // A learned retrieval policy's checkpoint that is damaged or changed since the run
            // recorded its hash.
            || cause
                .downcast_ref::<roboaudit_retrieval_learned::PolicyError>()
                .is_some_and(roboaudit_retrieval_learned::PolicyError::is_invalid_input)
    });
    if invalid { INVALID_INPUT } else { FAILURE }
}

/// A command-line usage error detected after parsing (exit code 2, like clap's own).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Exit code for a usage error.
pub const USAGE: i32 = 2;
