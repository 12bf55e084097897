//! The command line as a user meets it: the demo scene, bad input, the SVG diagram.

use std::path::Path;
use std::process::{Command, Output};

fn hashmark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hashmark"))
        .args(args)
        .output()
        .unwrap()
}

fn demo() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("demo/scene.json")
        .display()
        .to_string()
}

/// Exit code 2 and exactly one line on stderr that contains `needle`.
fn assert_refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"));
    assert!(out.stdout.is_empty());
}

#[test]
fn the_demo_scene_reads_as_a_table() {
    let out = hashmark(&["roll", "--scene", &demo(), "--ship", "s1"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // The demo is built so that the left roll moves through o1 and the right front lands
    // 1.3 mm on s2 while the middle clears it by 2 mm.
    assert!(text.contains("left: FAILS; template over o1"), "{text}");
    assert!(
        text.contains("right: can roll (2 of 3 positions legal)"),
        "{text}"
    );
    assert!(text.contains("ship s2 (-1.30)"), "{text}");
    assert!(text.contains("+2.00  nearest: ship s2"), "{text}");
}

#[test]
fn bad_scenes_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let cases = [
        ("notjson.json", "{ships: oops", "not valid JSON"),
        (
            "format.json",
            r#"{"format":"hashmark-scene/9","ships":[]}"#,
            "format: expected",
        ),
        ("noformat.json", r#"{"ships":[]}"#, "no format key"),
        (
            "model.json",
            r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"small","x":100,"y":100,"heading_deg":0}],"obstacles":[{"id":"o9","model":"deathstar","x":1,"y":1}]}"#,
            "unknown obstacle model \"deathstar\"",
        ),
        (
            "poly.json",
            r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"small","x":100,"y":100,"heading_deg":0}],"obstacles":[{"id":"o9","polygon":[[0,0],[5,5]]}]}"#,
            "at least 3 points",
        ),
        (
            "nan.json",
            r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"small","x":NaN,"y":100,"heading_deg":0}]}"#,
            "not valid JSON",
        ),
        (
            "size.json",
            r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"huge","x":1,"y":100,"heading_deg":0}]}"#,
            "ships[0].size",
        ),
        (
            "self.json",
            r#"{"format":"hashmark-scene/1","ships":[{"id":"s1","size":"small","x":100,"y":100,"heading_deg":0}],"obstacles":[{"id":"bow","polygon":[[0,0],[10,10],[10,0],[0,10]]}]}"#,
            "bow",
        ),
    ];
    for (name, text, needle) in cases {
        let path = write(name, text);
        assert_refused(
            &hashmark(&["roll", "--scene", &path, "--ship", "s1"]),
            needle,
        );
    }
    assert_refused(
        &hashmark(&["roll", "--scene", &demo(), "--ship", "nobody"]),
        "no ship \"nobody\"",
    );
    assert_refused(
        &hashmark(&["roll", "--scene", "/no/such/scene.json", "--ship", "s1"]),
        "cannot read /no/such/scene.json",
    );
    assert_refused(
        &hashmark(&[
            "roll",
            "--scene",
            &demo(),
            "--ship",
            "s2",
            "--template",
            "bank1-forward",
        ]),
        "small ships only",
    );
    // Usage errors are clap's, also exit code 2.
    let out = hashmark(&[
        "roll",
        "--scene",
        &demo(),
        "--ship",
        "s1",
        "--ignore-obstacles",
        "--tractor",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn json_verdict_has_the_promised_shape() {
    let out = hashmark(&[
        "roll",
        "--scene",
        &demo(),
        "--ship",
        "s1",
        "--direction",
        "right",
        "--json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &v["directions"][0];
    assert_eq!(d["direction"], "right");
    assert_eq!(v["directions"].as_array().unwrap().len(), 1);
    let front = &d["positions"][0];
    assert_eq!(front["slot"], "front");
    assert_eq!(front["legal"], false);
    assert_eq!(front["reasons"][0]["kind"], "ship");
    assert_eq!(front["reasons"][0]["id"], "s2");
    assert!((front["reasons"][0]["clearance_mm"].as_f64().unwrap() + 1.3).abs() < 1e-9);
}

/// A reader that has gone away (`hashmark roll ... | head -1` once `head` has its line)
/// ends the command quietly: `println!` panicked
/// on the broken pipe ("failed printing to stdout", exit code 101). The pipe's read end is
/// closed before the command starts, so its first write fails.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let demo = demo();
    for json in [false, true] {
        let mut args = vec!["roll", "--scene", &demo, "--ship", "s1"];
        if json {
            args.push("--json");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_hashmark"))
            .args(&args)
            .stdout(writer.try_clone().unwrap())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
            .wait_with_output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{args:?}: {err}");
        assert!(out.status.success(), "{args:?}: {:?}", out.status);
    }
}

#[test]
fn scene_svg_draws_the_roll_at_true_scale() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("demo.svg");
    let out = hashmark(&[
        "scene-svg",
        "--scene",
        &demo(),
        "--ship",
        "s1",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&out_path).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(
        svg.contains("width=\"1074.4mm\""),
        "true scale: play area plus 80 mm margins"
    );
    // Two templates, six landings (2 legal green, 4 illegal red), 8 ships, 6 obstacles.
    assert_eq!(svg.matches("stroke=\"#2ecc40\"").count(), 2);
    assert_eq!(
        svg.matches("stroke=\"#ff4136\"").count(),
        4 + 1,
        "4 illegal landings and the blocked template"
    );
    assert_eq!(svg.matches("fill=\"#1b1b1b\"").count(), 8);
    assert_eq!(svg.matches("fill=\"#7a5c3e\"").count(), 6);
    assert!(svg.contains("right front illegal: ship s2 -1.3 mm"));
    // A file that cannot be written is an error, and nothing is left behind.
    let bad = dir.path().join("missing/dir/x.svg");
    assert_refused(
        &hashmark(&[
            "scene-svg",
            "--scene",
            &demo(),
            "--out",
            bad.to_str().unwrap(),
        ]),
        "cannot write",
    );
}

#[test]
fn a_measured_scene_marks_what_the_camera_cannot_settle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("measured.json");
    std::fs::write(
        &path,
        r#"{"format":"hashmark-scene/1","ships":[
            {"id":"a","size":"small","x":300,"y":300,"heading_deg":90,"sigma_mm":0.5,"sigma_deg":0.2,"confidence":0.9},
            {"id":"b","size":"small","x":420.6,"y":300,"heading_deg":90,"sigma_mm":0.5,"sigma_deg":0.2,"confidence":0.9}]}"#,
    )
    .unwrap();
    let out = hashmark(&[
        "roll",
        "--scene",
        path.to_str().unwrap(),
        "--ship",
        "a",
        "--direction",
        "right",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("too close to call by camera"), "{text}");
    assert!(text.contains("legal?"), "{text}");
    let json = hashmark(&[
        "roll",
        "--scene",
        path.to_str().unwrap(),
        "--ship",
        "a",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let middle = &v["directions"][1]["positions"][1];
    assert_eq!(middle["too_close_to_call"], true);
    assert!(middle["nearest"]["sigma_mm"].as_f64().unwrap() > 0.5);
}
