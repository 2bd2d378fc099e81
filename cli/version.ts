/** The gwcli release version (`gwcli -V`). */
export const GWCLI_VERSION = "0.1.0";
