// Original file: protos/lint.proto


// Original file: protos/lint.proto

export const _gitaly_OperationMsg_Operation = {
  UNKNOWN: 'UNKNOWN',
  MUTATOR: 'MUTATOR',
  ACCESSOR: 'ACCESSOR',
  MAINTENANCE: 'MAINTENANCE',
} as const;

export type _gitaly_OperationMsg_Operation =
  | 'UNKNOWN'
  | 0
  | 'MUTATOR'
  | 1
  | 'ACCESSOR'
  | 2
  | 'MAINTENANCE'
  | 3

export type _gitaly_OperationMsg_Operation__Output = typeof _gitaly_OperationMsg_Operation[keyof typeof _gitaly_OperationMsg_Operation]

// Original file: protos/lint.proto

export const _gitaly_OperationMsg_Scope = {
  REPOSITORY: 'REPOSITORY',
  STORAGE: 'STORAGE',
  PARTITION: 'PARTITION',
} as const;

export type _gitaly_OperationMsg_Scope =
  | 'REPOSITORY'
  | 0
  | 'STORAGE'
  | 2
  | 'PARTITION'
  | 3

export type _gitaly_OperationMsg_Scope__Output = typeof _gitaly_OperationMsg_Scope[keyof typeof _gitaly_OperationMsg_Scope]

export interface OperationMsg {
  'op'?: (_gitaly_OperationMsg_Operation);
  'scope_level'?: (_gitaly_OperationMsg_Scope);
}

export interface OperationMsg__Output {
  'op'?: (_gitaly_OperationMsg_Operation__Output);
  'scope_level'?: (_gitaly_OperationMsg_Scope__Output);
}
