import { Module } from '@nestjs/common';
import { BundlesModule } from '../bundles/bundles.module';
import { RuleAcksCollector } from './rule-acks.collector';
import { RulesController } from './rules.controller';
import { RulesKafka } from './rules-kafka';
import { RulesRepository } from './rules.repository';
import { RulesService } from './rules.service';
import { ShadowResultsReader } from './shadow-results';

/** Rules of a deployment (docs/rules.md): versions, rollouts with per-subtask acks, rollback, shadow evaluation. */
@Module({
  // A deployment's rules schema is read from its bundle (DeploymentRulesSchemas).
  imports: [BundlesModule],
  controllers: [RulesController],
  providers: [RulesRepository, RulesKafka, RuleAcksCollector, RulesService, ShadowResultsReader],
  exports: [RulesService, ShadowResultsReader],
})
export class RulesModule {}
