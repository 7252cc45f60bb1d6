"""The catalogs: loading and validation (:mod:`~predictors.catalog.store`,
:mod:`~predictors.catalog.validate`), names of quantised checkpoints
(:mod:`~predictors.catalog.quantised`), the validity rules of a configuration
(:mod:`~predictors.catalog.validity`), Hugging Face config import
(:mod:`~predictors.catalog.hf_config`) and parameter counts (:mod:`~predictors.catalog.llm_params`).
"""
