export { default } from './job';
export {
  buildFraudJob,
  buildInMemoryFraudJob,
  defineFraudJob,
  fraudRuleLimits,
  fraudRulesSchema,
  fraudJobConfig,
  FRAUD_PARAMETERS,
  tenantFraudTopics,
  DEFAULT_MAX_WINDOW_MS,
  DEMO_TOPICS,
  OPERATOR_IDS,
  type FraudJobIo,
  type FraudJobSettings,
  type FraudJobTopics,
} from './job';
export type { Alert, RuleAck, RuledTransaction, RouterOutput } from './messages';
export { checkTransaction, TransactionFormatError, TRANSACTION_FIELDS, type Transaction } from './transaction';
