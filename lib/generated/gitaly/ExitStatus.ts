// Original file: protos/shared.proto


/**
 * Exit code of the git process; absent means success.
 */
export interface ExitStatus {
  'value'?: (number);
}

/**
 * Exit code of the git process; absent means success.
 */
export interface ExitStatus__Output {
  'value'?: (number);
}
