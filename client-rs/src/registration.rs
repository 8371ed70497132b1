//! Reading a daemon's registration file and checking that a `pong` comes from the daemon it describes.
//!
//! The protocol version is checked first, on the raw JSON, before the rest of the file is decoded or the socket
//! is touched: a daemon of another version may lay its registration out differently (SPEC V3).

use std::path::Path;

use opencode_pty_protocol::{PROTOCOL_VERSION, Registration};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::error::ClientError;
use crate::types::Pong;

/// The largest registration file the client reads (64 KiB). A real one is a few hundred bytes; anything larger
/// is not a registration, and this keeps a stray file from being read into memory whole.
pub const MAX_REGISTRATION_BYTES: u64 = 64 * 1024;

/// Reads and decodes a registration file, refusing one whose `protocol` is not [`PROTOCOL_VERSION`].
///
/// # Errors
///
/// [`ClientError::VersionMismatch`] for another protocol version (checked before anything else in the file),
/// [`ClientError::Registration`] when the file cannot be read, is larger than [`MAX_REGISTRATION_BYTES`], is
/// not JSON, or does not fit the registration schema.
pub async fn read_registration(path: &Path) -> Result<Registration, ClientError> {
    let invalid = |reason: String| ClientError::Registration { path: path.to_owned(), reason };
    let file = tokio::fs::File::open(path).await.map_err(|e| invalid(format!("cannot open it: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_REGISTRATION_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| invalid(format!("cannot read it: {e}")))?;
    if u64::try_from(bytes.len()).map_or(true, |len| len > MAX_REGISTRATION_BYTES) {
        return Err(invalid(format!("it is larger than {MAX_REGISTRATION_BYTES} bytes")));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(format!("it is not JSON: {e}")))?;
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
        std::fs::write(&path, vec![b' '; size]).expect("write");
        let error = read_registration(&path).await.unwrap_err();
        assert!(error.to_string().ends_with("it is larger than 65536 bytes"), "{error}");
    }
}
