//! One ordinary request, one response: maps every one-shot op onto the process service. Ownership, `shutdown`,
//! `subscribe` and `wait` need the connection itself and are handled in `connection.rs` and
//! `subscription.rs`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{MAX_INPUT_BYTES, Request, Response};

use crate::error::ServiceError;
use crate::pipe::PipeSpec;
use crate::service::{Process, ProcessService};
use crate::terminal::PtySpec;

/// The answer to one ordinary request. Failures become `error` responses with the service's message.
pub fn dispatch(service: &ProcessService, request: Request) -> Response {
    answer(service, request).unwrap_or_else(|error| Response::Error { message: error.to_string() })
}

fn answer(service: &ProcessService, request: Request) -> Result<Response, ServiceError> {
    let response = match request {
        Request::CreatePty { program, args, cwd, env, group_id, title, cols, rows } => {
            let spec =
                PtySpec { program, args, cwd: cwd.into(), env, group_id, title, cols: cols.get(), rows: rows.get() };
            Response::Created { process: service.create_pty(spec)? }
        }
        Request::CreatePipe { program, args, cwd, env, group_id, output_path, metadata } => {
            let spec =
                PipeSpec { program, args, cwd: cwd.into(), env, group_id, output_path: output_path.into(), metadata };
            Response::Created { process: service.create_pipe(spec)? }
        }
        Request::List { mode } => Response::Processes { processes: service.list(mode) },
        Request::Get { id } => Response::Process { process: service.get(id)? },
        Request::Write { id, attachment_id, data_base64 } => {
            let data = decode_input(&data_base64)?;
            service.pty(id)?.write(attachment_id, data)?;
            Response::Ok
        }
        Request::Resize { id, attachment_id, cols, rows } => {
            service.pty(id)?.resize(attachment_id, cols.get(), rows.get())?;
            Response::Ok
        }
        Request::Control { id, attachment_id, cols, rows } => {
            service.pty(id)?.control(attachment_id, cols.get(), rows.get())?;
            Response::Ok
        }
        Request::Input { id, attachment_id, cols, rows, data_base64 } => {
            let data = decode_input(&data_base64)?;
            service.pty(id)?.input(attachment_id, cols.get(), rows.get(), data)?;
            Response::Ok
        }
        Request::Snapshot { id } => service.pty(id)?.snapshot()?,
        Request::ReadRows { id, rows } => service.pty(id)?.read_rows(rows.map(|r| r.get()))?,
        Request::Rename { id, title } => {
            service.pty(id)?.rename(title)?;
            Response::Ok
        }
        Request::Replay { id, offset } => {
            let read = match service.process(id)? {
                Process::Pipe(pipe) => pipe.replay(offset)?,
                Process::Pty(pty) => pty.replay(offset)?,
            };
            Response::Replay {
                requested_offset: read.requested,
                available_offset: read.available,
                end_offset: read.end,
                truncated: read.truncated,
                data_base64: BASE64.encode(&read.bytes),
            }
        }
        Request::Terminate { id } => {
            service.terminate(id)?;
            Response::Ok
        }
        Request::Signal { id, signal } => {
            service.pipe(id)?.signal(signal)?;
            Response::Ok
        }
        Request::SetMetadata { id, metadata } => {
            service.pipe(id)?.set_metadata(metadata)?;
            Response::Ok
        }
        Request::Ping
        | Request::Wait { .. }
        | Request::Own { .. }
        | Request::PrepareHandoff
        | Request::Subscribe { .. }
        | Request::Shutdown => {
            return Err(ServiceError::invalid("this request needs its own connection handling"));
        }
    };
    Ok(response)
}

/// Decodes `data_base64` of `write` and `input`, at most [`MAX_INPUT_BYTES`].
fn decode_input(data: &str) -> Result<Vec<u8>, ServiceError> {
    // Four base64 characters carry three bytes: refuse an oversized payload before decoding it.
    if data.len() / 4 * 3 > MAX_INPUT_BYTES + 3 {
        return Err(ServiceError::invalid(format!("input is over the {MAX_INPUT_BYTES}-byte limit")));
    }
    let bytes = BASE64.decode(data).map_err(|_| ServiceError::invalid("invalid input base64"))?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(ServiceError::invalid(format!("input is over the {MAX_INPUT_BYTES}-byte limit")));
    }
    Ok(bytes)
}
