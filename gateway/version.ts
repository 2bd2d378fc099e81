/** The gateway release version (reported by the management API's `info`). */
export const VERSION = "0.1.0";
