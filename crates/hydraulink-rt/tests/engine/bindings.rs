//! Input bindings: the deadband, scale and rate-limit laws on both sides of each switch, and
//! the engine applying them at step boundaries (boom, input U ∈ [−10, 10] V, Δt = 1 ms).

use crate::core_of;
use hydraulink_rt::binding::{deadband, rate_limit, scale};
use hydraulink_rt::{BindingSource, Command, EngineOptions, InputBinding};

#[test]
fn the_deadband_is_zero_inside_and_continuous_at_its_edge() {
    let d = 0.2;
    for a in [0.0, 0.1, -0.1, 0.2, -0.2] {
        assert_eq!(deadband(a, d), 0.0, "inside at {a}");
    }
    // just outside the band: s grows from 0 with slope 1/(1 − d)
    let eps = 1e-9;
    assert!((deadband(0.2 + eps, d) - eps / 0.8).abs() < 1e-15);
    assert!((deadband(-0.2 - eps, d) + eps / 0.8).abs() < 1e-15);
    assert!((deadband(0.6, d) - 0.5).abs() < 1e-15);
    assert_eq!(deadband(1.0, d), 1.0);
    assert_eq!(deadband(-1.0, d), -1.0);
    assert_eq!(deadband(3.0, d), 1.0, "clamped");
    assert_eq!(deadband(0.5, 0.0), 0.5, "no band: the identity");
}

#[test]
fn the_scale_maps_rest_to_zero_and_full_deflection_to_the_ends() {
    assert_eq!(scale(0.0, [-10.0, 10.0]), 0.0);
    assert_eq!(scale(1.0, [-10.0, 10.0]), 10.0);
    assert_eq!(scale(-1.0, [-10.0, 10.0]), -10.0);
    assert_eq!(scale(0.5, [-4.0, 8.0]), 4.0);
    assert_eq!(scale(-0.5, [-4.0, 8.0]), -2.0);
    // a range without 0 (an engine speed): rest is its middle
    assert_eq!(scale(0.0, [100.0, 200.0]), 150.0);
    assert_eq!(scale(-1.0, [100.0, 200.0]), 100.0);
}

#[test]
fn the_rate_limit_clamps_the_change_on_both_sides() {
    assert_eq!(rate_limit(0.0, 1.0, 0.05), 0.05);
    assert_eq!(rate_limit(0.0, -1.0, 0.05), -0.05);
    assert_eq!(
        rate_limit(0.98, 1.0, 0.05),
        1.0,
        "reaches the target exactly"
    );
    assert_eq!(rate_limit(1.0, 1.0, 0.05), 1.0);
}

fn boom_binding(source: BindingSource, deadband: f64, rate: Option<f64>) -> EngineOptions {
    EngineOptions {
        bindings: vec![InputBinding {
            input: "U".into(),
            source,
            range: [-10.0, 10.0],
            deadband,
            rate_limit_per_s: rate,
        }],
        ..EngineOptions::default()
    }
}

/// An axis inside the deadband holds U at rest; outside it, U follows the scaled deflection.
#[test]
fn an_axis_inside_the_deadband_holds_the_input_at_rest() {
    let (mut core, ch) = core_of(
        "boom",
        boom_binding(BindingSource::Axis("right_y".into()), 0.1, None),
        50,
    );
    // the boom's own signal would drive U to 10 V at 0.5 s: the binding owns U from its first event
    ch.commands
        .send(Command::Axis {
            axis: "right_y".into(),
            value: 0.08,
        })
        .expect("send");
    core.run_steps(700);
    assert_eq!(core.simulation().input("U").expect("U"), 0.0);
    ch.commands
        .send(Command::Axis {
            axis: "right_y".into(),
            value: -0.55,
        })
        .expect("send");
    core.run_steps(1);
    // s = −(0.55 − 0.1)/0.9 = −0.5 → −5 V
    assert!((core.simulation().input("U").expect("U") + 5.0).abs() < 1e-12);
    let report = core.finish();
    // two changes logged: 0 on activation, −5 after
    assert_eq!(report.recording.events.len(), 2);
    assert_eq!(report.recording.events[1].step, 700);
}

/// A key held ramps U at the rate limit (50 V/s = 0.05 V per 1 ms step) to the top of its range,
/// and back to rest at the same rate when released.
#[test]
fn a_held_key_ramps_the_input_at_the_rate_limit() {
    let keys = BindingSource::Keys {
        positive: "ArrowUp".into(),
        negative: "ArrowDown".into(),
    };
    let (mut core, ch) = core_of("boom", boom_binding(keys, 0.0, Some(50.0)), 50);
    let u = |core: &hydraulink_rt::Core<_>| core.simulation().input("U").expect("U");
    ch.commands
        .send(Command::Key {
            key: "ArrowUp".into(),
            pressed: true,
        })
        .expect("send");
    for k in 1..=100 {
        core.run_steps(1);
        assert!(
            (u(&core) - 0.05 * k as f64).abs() < 1e-12,
            "step {k}: {}",
            u(&core)
        );
    }
    core.run_steps(150);
    assert_eq!(u(&core), 10.0, "clamped at the range's top");
    ch.commands
        .send(Command::Key {
            key: "ArrowUp".into(),
            pressed: false,
        })
        .expect("send");
    core.run_steps(100);
    assert!((u(&core) - 5.0).abs() < 1e-9, "half way down: {}", u(&core));
    core.run_steps(150);
    assert_eq!(u(&core), 0.0);
    // both keys: rest
    for key in ["ArrowUp", "ArrowDown"] {
        ch.commands
            .send(Command::Key {
                key: key.into(),
                pressed: true,
            })
            .expect("send");
    }
    core.run_steps(10);
    assert_eq!(u(&core), 0.0);
}

/// Bad bindings are refused with the field named.
#[test]
fn bad_bindings_name_their_field() {
    let axis = || BindingSource::Axis("a".into());
    for (options, field) in [
        (boom_binding(axis(), 1.0, None), "bindings[0].deadband"),
        (
            boom_binding(axis(), 0.0, Some(0.0)),
            "bindings[0].rate_limit_per_s",
        ),
        (
            boom_binding(BindingSource::Axis(String::new()), 0.0, None),
            "bindings[0].source.axis",
        ),
        (
            EngineOptions {
                bindings: vec![InputBinding {
                    input: "V".into(),
                    source: axis(),
                    range: [-1.0, 1.0],
                    deadband: 0.0,
                    rate_limit_per_s: None,
                }],
                ..EngineOptions::default()
            },
            "bindings[0].input",
        ),
    ] {
        let e = hydraulink_rt::Core::new(
            crate::sim_of("boom"),
            options,
            hydraulink_rt::ManualClock::new(std::time::Duration::ZERO),
        )
        .expect_err("refused")
        .to_string();
        assert!(e.starts_with(field), "{e}");
    }
    let mut b = boom_binding(axis(), 0.0, None).bindings.remove(0);
    b.range = [1.0, 1.0];
    assert!(b
        .check(3)
        .expect_err("empty range")
        .to_string()
        .starts_with("bindings[3].range"));
}

/// A binding reads from TOML (a model or binding file) through serde.
#[test]
fn bindings_deserialize_from_toml() {
    #[derive(serde::Deserialize)]
    struct File {
        bindings: Vec<InputBinding>,
    }
    let f: File = toml::from_str(
        r#"
        [[bindings]]
        input = "U_boom"
        source = { axis = "right_y" }
        range = [-10.0, 10.0]
        deadband = 0.1
        rate_limit_per_s = 50.0

        [[bindings]]
        input = "U_swing"
        source = { keys = { positive = "d", negative = "a" } }
        range = [-10.0, 10.0]
        "#,
    )
    .expect("parses");
    assert_eq!(f.bindings[0].source, BindingSource::Axis("right_y".into()));
    assert_eq!(f.bindings[0].rate_limit_per_s, Some(50.0));
    assert_eq!(f.bindings[1].deadband, 0.0);
    assert!(matches!(f.bindings[1].source, BindingSource::Keys { .. }));
}

/// A key pair and a stick on the same input: the deflected one wins. The stick at rest does not
/// hold U at 0 while a key is held, a deflected stick wins over a held key, and the switch
/// between them keeps the rate limit (50 V/s = 0.05 V per 1 ms step).
#[test]
fn the_deflected_binding_wins() {
    let mut options = boom_binding(
        BindingSource::Keys {
            positive: "w".into(),
            negative: "s".into(),
        },
        0.0,
        Some(50.0),
    );
    let mut axis = options.bindings[0].clone();
    axis.source = BindingSource::Axis("right_y".into());
    axis.deadband = 0.1;
    options.bindings.push(axis);
    let (mut core, ch) = core_of("boom", options, 50);
    let u = |core: &hydraulink_rt::Core<_>| core.simulation().input("U").expect("U");
    let send = |c: Command| ch.commands.send(c).expect("send");
    // the stick wakes up at rest (inside its deadband), then W is held
    send(Command::Axis {
        axis: "right_y".into(),
        value: 0.05,
    });
    send(Command::Key {
        key: "w".into(),
        pressed: true,
    });
    core.run_steps(100);
    assert!(
        (u(&core) - 5.0).abs() < 1e-9,
        "the key drives U: {}",
        u(&core)
    );
    // the stick pulled fully down wins over the held key, from 5 V at the rate limit
    send(Command::Axis {
        axis: "right_y".into(),
        value: -1.0,
    });
    core.run_steps(20);
    assert!(
        (u(&core) - 4.0).abs() < 1e-9,
        "ramps down from 5 V: {}",
        u(&core)
    );
    // the stick back at rest: the held key wins again and ramps up from where U is
    send(Command::Axis {
        axis: "right_y".into(),
        value: 0.0,
    });
    core.run_steps(20);
    assert!((u(&core) - 5.0).abs() < 1e-9, "the key again: {}", u(&core));
    // neither deflected: back to rest
    send(Command::Key {
        key: "w".into(),
        pressed: false,
    });
    core.run_steps(200);
    assert_eq!(u(&core), 0.0);
}
