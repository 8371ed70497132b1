//! Reading a daemon's registration file and checking that a `pong` comes from the daemon it describes.
//!
//! The protocol version is checked first, on the raw JSON, before the rest of the file is decoded or the socket
//! is touched: a daemon of another version may lay its registration out differently (SPEC V3).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;

use opencode_pty_protocol::{PROTOCOL_VERSION, Registration};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::error::ClientError;
use crate::types::Pong;

/// The largest registration file the client reads (64 KiB). A real one is a few hundred bytes; anything larger
/// is not a registration, and this keeps a stray file from being read into memory whole.
pub const MAX_REGISTRATION_BYTES: u64 = 64 * 1024;

/// Reads and decodes a registration file, refusing one whose `protocol` is not [`PROTOCOL_VERSION`], and one
/// that is a symbolic link, not a regular file, another user's, or readable or writable by anyone else.
///
/// # Errors
///
/// [`ClientError::VersionMismatch`] for another protocol version (checked before anything else in the file),
/// [`ClientError::Registration`] when the file cannot be read, is not private (as above), is larger than
/// [`MAX_REGISTRATION_BYTES`], is not JSON, or does not fit the registration schema.
pub async fn read_registration(path: &Path) -> Result<Registration, ClientError> {
    let invalid = |reason: String| ClientError::Registration { path: path.to_owned(), reason };
    // Not through a symbolic link, and without waiting on a FIFO someone put in its place.
    let flags = (OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits();
    let file = tokio::fs::OpenOptions::new().read(true).custom_flags(flags).open(path).await.map_err(|e| {
        match e.raw_os_error() {
            Some(code) if code == Errno::ELOOP as i32 => invalid("it is a symbolic link".to_owned()),
            _ => invalid(format!("cannot open it: {e}")),
        }
    })?;
    let metadata = file.metadata().await.map_err(|e| invalid(format!("cannot read it: {e}")))?;
    check_private(&metadata).map_err(invalid)?;
    let mut bytes = Vec::new();
    file.take(MAX_REGISTRATION_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| invalid(format!("cannot read it: {e}")))?;
    parse_registration(path, &bytes)
}

/// A registration the client trusts is a regular file of its own user that nobody else can read or write,
/// as the daemon writes it (the token in it is the daemon's whole authentication).
fn check_private(metadata: &std::fs::Metadata) -> Result<(), String> {
    if !metadata.is_file() {
        return Err("it is not a regular file".to_owned());
    }
    let uid = nix::unistd::getuid().as_raw();
    if metadata.uid() != uid {
        return Err(format!("it belongs to uid {}, not to us ({uid})", metadata.uid()));
    }
    if metadata.mode() & 0o077 != 0 {
        return Err(format!("its mode is {:o}, not 600", metadata.mode() & 0o777));
    }
    Ok(())
}

/// Decodes the contents of the registration file at `path` (named in errors only).
///
/// # Errors
///
/// [`ClientError::VersionMismatch`] for another protocol version (checked before anything else),
/// [`ClientError::Registration`] when `bytes` are more than [`MAX_REGISTRATION_BYTES`], not JSON, or do not fit
/// the registration schema.
pub fn parse_registration(path: &Path, bytes: &[u8]) -> Result<Registration, ClientError> {
    let invalid = |reason: String| ClientError::Registration { path: path.to_owned(), reason };
    if u64::try_from(bytes.len()).map_or(true, |len| len > MAX_REGISTRATION_BYTES) {
        return Err(invalid(format!("it is larger than {MAX_REGISTRATION_BYTES} bytes")));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| invalid(format!("it is not JSON: {e}")))?;
    match value.get("protocol").and_then(Value::as_u64) {
        Some(found) if found == u64::from(PROTOCOL_VERSION) => {}
        Some(found) => return Err(ClientError::VersionMismatch { expected: u64::from(PROTOCOL_VERSION), found }),
        None => return Err(invalid("it has no integer `protocol` member".to_owned())),
    }
    serde_json::from_value(value).map_err(|e| invalid(format!("it does not fit the registration schema: {e}")))
}

/// Checks that a `pong` names the protocol, instance and process id of the registration.
pub(crate) fn check_identity(registration: &Registration, pong: &Pong) -> Result<(), ClientError> {
    let pairs = [
        ("protocol", registration.protocol.to_string(), pong.protocol.to_string()),
        ("instance_id", registration.instance_id.clone(), pong.instance_id.clone()),
        ("pid", registration.pid.to_string(), pong.pid.to_string()),
    ];
    for (field, registered, answered) in pairs {
        if registered != answered {
            return Err(ClientError::IdentityMismatch { field, registered, answered });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::REGISTRATION_FILE;

    use super::*;

    fn registration() -> Registration {
        Registration {
            features: Vec::new(),
            instance_id: "a".repeat(32),
            pid: 10,
            protocol: PROTOCOL_VERSION,
            socket: "/nowhere".into(),
            token: "b".repeat(32),
        }
    }

    fn pong() -> Pong {
        Pong { instance_id: "a".repeat(32), pid: 10, protocol: PROTOCOL_VERSION, features: vec!["new".into()] }
    }

    #[test]
    fn a_matching_pong_passes_whatever_its_features() {
        assert!(check_identity(&registration(), &pong()).is_ok());
    }

    #[test]
    fn each_identity_member_is_checked() {
        type Change = fn(&mut Pong);
        let cases: [(&str, Change); 3] = [
            ("protocol", |p| p.protocol = 9),
            ("instance_id", |p| p.instance_id = "c".repeat(32)),
            ("pid", |p| p.pid = 11),
        ];
        for (expected, change) in cases {
            let mut answered = pong();
            change(&mut answered);
            let error = check_identity(&registration(), &answered).unwrap_err();
            assert!(matches!(error, ClientError::IdentityMismatch { field, .. } if field == expected), "{expected}");
        }
    }

    #[tokio::test]
    async fn an_oversized_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(REGISTRATION_FILE);
        let size = usize::try_from(MAX_REGISTRATION_BYTES).expect("fits") + 1;
        write_private(&path, &vec![b' '; size]);
        let error = read_registration(&path).await.unwrap_err();
        assert!(error.to_string().ends_with("it is larger than 65536 bytes"), "{error}");
    }

    /// Writes `bytes` to `path` with the daemon's mode, 0600.
    fn write_private(path: &Path, bytes: &[u8]) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, bytes).expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }

    #[tokio::test]
    async fn only_a_private_regular_file_is_read_never_a_link_a_fifo_or_a_shared_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.json");
        write_private(&real, serde_json::to_string(&registration()).unwrap().as_bytes());
        assert_eq!(read_registration(&real).await.expect("a private file is read"), registration());
        let link = dir.path().join(REGISTRATION_FILE);
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let error = read_registration(&link).await.unwrap_err();
        assert!(error.to_string().ends_with("it is a symbolic link"), "{error}");
        let fifo = dir.path().join("fifo.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
        let error = read_registration(&fifo).await.unwrap_err();
        assert!(error.to_string().ends_with("it is not a regular file"), "{error}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let error = read_registration(&real).await.unwrap_err();
        assert!(error.to_string().ends_with("its mode is 644, not 600"), "{error}");
    }
}
