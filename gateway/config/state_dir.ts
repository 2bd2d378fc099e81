/**
 * `GATEWAY_STATE_DIR`: where a gateway whose configuration directory is read-only (a systemd
 * unit, a container with the config mounted read-only) keeps what it writes. When set, the
 * relative paths and defaults of `[cloud] state_dir` and `data_dir`, `[backends.<name>.queue] dir`
 * and `[audit] file` resolve against it instead of the main config file's directory.
 */

/** Name of the variable. */
export const STATE_DIR_ENV = "GATEWAY_STATE_DIR";
