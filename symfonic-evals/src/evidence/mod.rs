//! The evidence model: what the harness asks and what a deployment reports.

mod depth;
mod edit;
mod error;
mod exception;
mod governance;
mod record;
mod request;
mod tool_call;

pub use depth::MAX_JSON_DEPTH;
pub use edit::{EditDecision, EditedAction};
pub(crate) use error::shown_as_is;
pub use error::{is_plain_name, TurnError};
pub use exception::{ExceptionFrame, ExceptionTrace};
pub use governance::{StageOutcome, StageRecord};
pub use record::{
    Approvers, Pause, Terminal, TurnRecord, TurnRecordBuilder, PAUSED, PAUSE_FACTS, PAUSE_NAME,
    PAUSE_RESUMABLE,
};
pub use request::{
    Feedback, Operation, PromptRequest, ResetRequest, ResumeRequest, ReviewAction, ReviewRequest,
    Role,
};
pub use tool_call::{ResolvedCall, ToolCall, ToolOutcome};
