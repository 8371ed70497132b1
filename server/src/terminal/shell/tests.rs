//! Which programs are shells, the arguments and files a launch gets, and that the files go with it.

use super::*;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|&arg| arg.to_owned()).collect()
}

#[test]
fn shells_are_known_by_their_file_name_and_other_programs_are_refused_by_name() {
    assert_eq!(Shell::of("bash").unwrap(), Shell::Bash);
    assert_eq!(Shell::of("/usr/bin/zsh").unwrap(), Shell::Zsh);
    assert_eq!(Shell::of("/opt/fish/bin/fish").unwrap(), Shell::Fish);
    let error = Shell::of("/bin/sh").unwrap_err().to_string();
    assert!(error.contains(SUPPORTED_SHELLS) && error.contains("/bin/sh"), "{error}");
}

#[test]
fn a_login_option_is_taken_out_for_bash_only_among_the_leading_options() {
    assert_eq!(without_login_option(&strings(&["-l"])), (true, vec![]));
    assert_eq!(without_login_option(&strings(&["--login", "-O", "extglob"])), (true, strings(&["-O", "extglob"])));
    assert_eq!(without_login_option(&strings(&["script.sh", "-l"])), (false, strings(&["script.sh", "-l"])));
    assert_eq!(without_login_option(&strings(&["-i"])), (false, strings(&["-i"])));
}

#[test]
fn each_launch_writes_private_files_with_the_nonce_and_removes_them_when_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let shell_dir = dir.path().join(SHELL_DIR);
    let bash = prepare(&shell_dir, 1, "bash", &strings(&["-l"]), None).expect("bash");
    assert_eq!(bash.args[0], "--rcfile");
    let script = fs::read_to_string(&bash.args[1]).expect("script");
    assert!(script.starts_with(&format!("__opty_nonce={}\n__opty_login=1\n", bash.nonce)), "{script}");
    assert_eq!(bash.nonce.len(), 32);
    let zsh = prepare(&shell_dir, 2, "zsh", &[], Some("/home/me/it's")).expect("zsh");
    let (name, zdotdir) = zsh.env.clone().expect("ZDOTDIR");
    assert_eq!(name, "ZDOTDIR");
    let zshenv = fs::read_to_string(Path::new(&zdotdir).join(".zshenv")).expect(".zshenv");
    assert!(zshenv.contains(r"__opty_user_zdotdir='/home/me/it'\''s'"), "{zshenv}");
    let fish = prepare(&shell_dir, 3, "fish", &strings(&["-l"]), None).expect("fish");
    assert_eq!(fish.args[2], "-l");
    assert!(fish.args[1].starts_with("source '"), "{}", fish.args[1]);
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| fs::metadata(path).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&shell_dir), PRIVATE_DIR_MODE);
    assert_eq!(mode(Path::new(&bash.args[1])), PRIVATE_FILE_MODE);
    assert_ne!(bash.nonce, zsh.nonce);
    drop((bash, zsh, fish));
    assert_eq!(fs::read_dir(&shell_dir).expect("folder").count(), 0);
}
