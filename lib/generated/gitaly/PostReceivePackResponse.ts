// Original file: protos/smarthttp.proto


export interface PostReceivePackResponse {
  'data'?: (Buffer | Uint8Array | string);
}

export interface PostReceivePackResponse__Output {
  'data'?: (Buffer);
}
