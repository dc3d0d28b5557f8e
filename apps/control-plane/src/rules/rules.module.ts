import { Module } from '@nestjs/common';
import { BundlesModule } from '../bundles/bundles.module';
import { DeploymentRulesSchemas } from './deployment-rules-schema';
import { RuleAcksCollector } from './rule-acks.collector';
import { RulesController } from './rules.controller';
import { RulesKafka } from './rules-kafka';
import { RulesRepository } from './rules.repository';
import { RulesService } from './rules.service';
import { ShadowResultsReader } from './shadow-results';

/** Rules of a deployment (docs/rules.md): versions, rollouts with per-subtask acks, rollback, shadow evaluation. */
@Module({
  // The bundle inspector (one per control plane, bounding the sandboxes at once) reads a deployment's rules schema.
  imports: [BundlesModule],
  controllers: [RulesController],
  providers: [RulesRepository, RulesKafka, RuleAcksCollector, RulesService, ShadowResultsReader, DeploymentRulesSchemas],
  exports: [RulesService, ShadowResultsReader],
})
export class RulesModule {}
