// Original file: protos/smarthttp.proto


export interface InfoRefsResponse {
  'data'?: (Buffer | Uint8Array | string);
}

export interface InfoRefsResponse__Output {
  'data'?: (Buffer);
}
